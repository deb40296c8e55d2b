import { createClient } from 'redis';
import type { CounterStore } from './rate-limit.js';

/**
 * The Redis store (REDIS_URL): one key per bucket and window, counted with INCR and expiring with
 * the window, in one round trip. Redis unreachable means the request fails (503), never unlimited.
 */
export async function openRedisStore(url: string): Promise<CounterStore> {
  const client = createClient({ url, disableOfflineQueue: true });
  // Errors surface on the commands that fail; an 'error' event must not crash the process.
  client.on('error', () => {});
  await client.connect();
  return {
    async hit(bucket, windowStart, windowMs) {
      const key = `fsm:rl:${bucket}:${windowStart}`;
      const [hits] = await client.multi().incr(key).pExpire(key, windowMs, 'NX').exec();
      return Number(hits);
    },
    async close() {
      await client.close();
    },
  };
}
