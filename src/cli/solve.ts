import { ProblemError, parseProblem } from '../domain/planning/solver/parse.js';
import { solve as runSolver } from '../domain/planning/solver/solve.js';
import { toVroom } from '../domain/planning/solver/output.js';
import type { Command } from './command.js';
import { CommandError, UsageError } from './validate.js';

const DEFAULT_LIMIT_S = 5;
const MAX_LIMIT_S = 3600;
/** Kept back from the limit for printing the answer (and the process's own start). */
const MARGIN_MS = 30;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const solve: Command = {
  name: 'solve',
  summary: "Solves a dispatch problem in VROOM's JSON form read from stdin (no database) and prints the routes.",
  details: [
    'The problem: jobs (id, location_index, service, delivery, time_windows, skills, priority), vehicles (id,',
    'start_index, end_index, capacity, time_window, skills) and matrices.car.durations (integers). It prints',
    '{"code":0,"summary":{...},"unassigned":[{"id"}],"routes":[{"vehicle","cost","duration","steps":[...]}]}',
    'within the time limit: as many jobs as can be served, then the least total duration. A problem it',
    'refuses (more than 2,000 jobs, a matrix of the wrong size, a job no vehicle can reach in time, ...)',
    'exits 1 with a message naming the member. See docs/planning.md.',
  ].join('\n'),
  options: {
    'time-limit': { type: 'string', value: 'S', help: `seconds to search (default ${DEFAULT_LIMIT_S})` },
  },
  needsDatabase: false,
  async run({ values }) {
    const given = values['time-limit'];
    let limit = DEFAULT_LIMIT_S;
    if (given !== undefined) {
      limit = typeof given === 'string' && /^\d+(\.\d+)?$/.test(given) ? Number(given) : NaN;
      if (!(limit > 0 && limit <= MAX_LIMIT_S))
        throw new UsageError(`--time-limit must be a number of seconds above 0, at most ${MAX_LIMIT_S}`);
    }
    const text = await readStdin();
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch (err) {
      throw new CommandError(`stdin: not a JSON problem (${(err as Error).message})`);
    }
    let model;
    try {
      model = parseProblem(input);
    } catch (err) {
      if (err instanceof ProblemError) throw new CommandError(err.message);
      throw err;
    }
    // performance.now() counts from the process's start: the limit holds for the whole command.
    const timeLimitMs = Math.max(0, limit * 1000 - performance.now() - MARGIN_MS);
    return toVroom(model, runSolver(model, { timeLimitMs, seed: 1 }));
  },
};
