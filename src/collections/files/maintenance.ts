import type { Services } from '../machinery/services.js';
import { STAGING_MAX_AGE_MS } from '../../storage/blobs.js';
import { retryDeletions, sweepOrphans } from './bytes.js';

/** Pending removals and this process's leftovers are retried this often (cheap: one small query). */
const RETRY_MS = 10_000;
/** Staging older than STAGING_MAX_AGE_MS is looked for this often. */
const SWEEP_MS = 60 * 60 * 1000;
/** Bytes no row references are looked for this often: it lists every stored digest. */
const ORPHANS_MS = 24 * 60 * 60 * 1000;

export interface FilesMaintenance {
  stop(): Promise<void>;
}

interface Log {
  warn(obj: object, msg: string): void;
}

/**
 * The file store's housekeeping, one per process: at start it removes the staging files of
 * processes that died on this host (SIGKILL); every RETRY_MS it retries the removals that failed
 * while the store was down; every SWEEP_MS (and at start) it removes staging left untouched for
 * STAGING_MAX_AGE_MS, and every ORPHANS_MS (and at start) the bytes no row references that are
 * that old (docs/files.md). A failure is logged once, when it starts.
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
  let lastOrphans = -Infinity;
  let failing = false;
  let running: Promise<void> = Promise.resolve();

  const pass = async (staging: boolean, orphans: boolean) => {
    const now = clock();
    try {
      await blobs.sweep(staging ? now - STAGING_MAX_AGE_MS : undefined);
      await retryDeletions(database, blobs, now);
      if (orphans) await sweepOrphans(database, blobs, now - STAGING_MAX_AGE_MS, now);
      failing = false;
    } catch (err) {
      if (!failing) log?.warn({ err }, 'file store housekeeping failed; it tries again every 10 s');
      failing = true;
    }
  };
  const tick = () => {
    const now = clock();
    const staging = now - lastSweep >= SWEEP_MS;
    const orphans = now - lastOrphans >= ORPHANS_MS;
    if (staging) lastSweep = now;
    if (orphans) lastOrphans = now;
    running = pass(staging, orphans).finally(() => {
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
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
