#!/usr/bin/env node
/**
 * The admin CLI's entry. `fsm solve` loads only the solver: the storage and OAuth modules the other
 * commands need take a few tenths of a second to load, and its time limit counts from the process's
 * start. Every other command (and `fsm --help`) runs in main.ts.
 */
const argv = process.argv.slice(2);
if (argv[0] === 'solve') await (await import('./solve-main.js')).runSolve(argv.slice(1));
else await import('./main.js');
