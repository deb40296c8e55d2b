import type { Services } from '../machinery/services.js';
import { STAGING_MAX_AGE_MS } from '../../storage/blobs.js';
import { retryDeletions, sweepOrphans } from './bytes.js';

/** Pending removals and this process's leftovers are retried this often (cheap: one small query). */
const RETRY_MS = 10_000;
/** Staging older than STAGING_MAX_AGE_MS and unreferenced bytes are looked for this often. */
const SWEEP_MS = 60 * 60 * 1000;

export interface FilesMaintenance {
  /** One full pass now (tests): retries, then the sweeps. */
  sweepNow(): Promise<void>;
  stop(): Promise<void>;
}

interface Log {
  warn(obj: object, msg: string): void;
}

/**
 * The file store's housekeeping, one per process: at start it removes the staging files of
 * processes that died on this host (SIGKILL); every RETRY_MS it retries the removals that failed
 * while the store was down; every SWEEP_MS (and at start) it removes staging left untouched for
 * STAGING_MAX_AGE_MS and the bytes no row references (docs/files.md).
 */
export async function startFilesMaintenance(
  services: Services,
  clock: () => number,
  log?: Log,
): Promise<FilesMaintenance> {
  const { database, blobs } = services;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lastSweep = -Infinity;
  let running: Promise<void> = Promise.resolve();

  const pass = async (full: boolean) => {
    const now = clock();
    try {
      await blobs.sweep(full ? now - STAGING_MAX_AGE_MS : undefined);
      await retryDeletions(database, blobs, now);
      if (full) await sweepOrphans(database, blobs, now - STAGING_MAX_AGE_MS, now);
    } catch (err) {
      log?.warn({ err }, 'file store housekeeping failed; it tries again later');
    }
  };
  const tick = () => {
    const full = clock() - lastSweep >= SWEEP_MS;
    if (full) lastSweep = clock();
    running = pass(full).finally(() => {
      if (!stopped) schedule();
    });
  };
  const schedule = () => {
    timer = setTimeout(tick, RETRY_MS);
    timer.unref();
  };

  // Leftovers of dead processes go before the first request is taken; the rest runs in the background.
  await blobs.sweep().catch(() => 0);
  tick();
  return {
    async sweepNow() {
      await running;
      lastSweep = clock();
      await pass(true);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
