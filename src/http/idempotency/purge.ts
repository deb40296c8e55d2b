import type { FastifyInstance } from 'fastify';
import { purgeExpired } from './repository.js';

const EVERY_MS = 60_000;
const BATCH = 500;

/**
 * Deletes kept answers past their 24 h in the background, a small batch at a time (short
 * statements that never hold up the writes); a full batch is followed by another a second later.
 */
export function purgeInBackground(
  app: Pick<FastifyInstance, 'database' | 'clock' | 'addHook'>,
  every = EVERY_MS,
): void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    let deleted = 0;
    try {
      deleted = await purgeExpired(app.database.db, app.clock(), BATCH);
    } catch {
      // The database is unavailable: the next tick tries again.
    }
    if (!stopped) schedule(deleted === BATCH ? Math.min(1000, every) : every);
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => void tick(), ms);
    timer.unref();
  };
  app.addHook('onReady', async () => schedule(every));
  app.addHook('onClose', async () => {
    stopped = true;
    clearTimeout(timer);
  });
}
