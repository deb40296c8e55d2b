/** The dispatch solver (PRODUCT §15): VRPTW by regret insertion and SISR ruin and recreate. */
export { parseProblem, ProblemError, MAX_JOBS } from './parse.js';
export { solve } from './solve.js';
export { solveInWorker, SolverWorker } from './in-worker.js';
export { toVroom } from './output.js';
export { checkSolution } from './check.js';
export type * from './types.js';
