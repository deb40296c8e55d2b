import { Worker } from 'node:worker_threads';
import type { Model, Solution, SolveOptions } from './types.js';

/** A worker thread running `solve`, off the caller's event loop; requests are queued in it. */
export class SolverWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (s: Solution) => void; reject: (e: Error) => void }>();
  private next = 1;

  constructor() {
    this.worker = new Worker(new URL('./worker.js', import.meta.url));
    this.worker.on('message', (msg: { id: number; solution?: Solution; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.solution) p.resolve(msg.solution);
      else p.reject(new Error(`the solver failed: ${msg.error}`));
    });
    const failAll = (err: Error) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', failAll);
    this.worker.on('exit', (code) => failAll(new Error(`the solver's worker exited (${code})`)));
  }

  solve(model: Model, opts: SolveOptions): Promise<Solution> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, model, opts });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** `solve` on a worker thread of its own (started and ended here). */
export async function solveInWorker(model: Model, opts: SolveOptions): Promise<Solution> {
  const worker = new SolverWorker();
  try {
    return await worker.solve(model, opts);
  } finally {
    await worker.close();
  }
}
