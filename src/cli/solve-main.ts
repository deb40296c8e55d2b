import { commandHelp, parse } from './command.js';
import { solve } from './solve.js';
import { CommandError, UsageError } from './validate.js';

/** `fsm solve` as main.ts runs a command (JSON on stdout; exit 1 on failure, 2 on wrong usage), without the storage modules. */
export async function runSolve(args: string[]): Promise<void> {
  try {
    const { values, positionals, help } = parse(solve, args);
    if (help) {
      process.stdout.write(commandHelp(solve));
      return;
    }
    const out = await solve.run({
      database: undefined as never,
      services: undefined as never,
      config: undefined as never,
      values,
      positionals,
    });
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } catch (err) {
    const usage = err instanceof UsageError || String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS');
    const known = usage || err instanceof CommandError;
    process.stderr.write(
      `error: ${known ? (err as Error).message : `failed: ${(err as Error).message ?? String(err)}`}\n`,
    );
    process.exitCode = usage ? 2 : 1;
  }
}
