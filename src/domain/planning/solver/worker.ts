import { parentPort } from 'node:worker_threads';
import { solve } from './solve.js';
import type { Model, SolveOptions } from './types.js';

/** The solver's worker thread (started by SolverWorker): one request at a time, answered in turn. */
parentPort?.on('message', (msg: { id: number; model: Model; opts: SolveOptions }) => {
  try {
    parentPort!.postMessage({ id: msg.id, solution: solve(msg.model, msg.opts) });
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: (err as Error).stack ?? String(err) });
  }
});
