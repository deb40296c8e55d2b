import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { createClient } from 'redis';

/**
 * The Redis store of @fastify/rate-limit (REDIS_URL), on the project's Redis client. The library's
 * own RedisStore needs ioredis (it defines a Lua command); this is the same counting through its
 * store interface: one key per bucket, INCR, the window's expiry set by its first hit, and the
 * time left, in one atomic round trip (MULTI). Redis unreachable means the request fails (503),
 * never unlimited.
 */
export async function openRedisStore(
  url: string,
  prefix = 'fsm:rl:',
): Promise<{ Store: FastifyRateLimitStoreCtor; close(): Promise<void> }> {
  const client = createClient({ url, disableOfflineQueue: true });
  // Errors surface on the commands that fail; an 'error' event must not crash the process.
  client.on('error', () => {});
  await client.connect();
  // The library constructs its store from a class; its limiters share this one client.
  class RedisStore implements FastifyRateLimitStore {
    incr(bucket: string, callback: Parameters<FastifyRateLimitStore['incr']>[1], timeWindow: number): void {
      const key = prefix + bucket;
      client
        .multi()
        .incr(key)
        .pExpire(key, timeWindow, 'NX')
        .pTTL(key)
        .exec()
        .then(
          ([current, , ttl]) => callback(null, { current: Number(current), ttl: Number(ttl) }),
          (err: Error) => callback(err),
        );
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  }
  return {
    Store: RedisStore,
    async close() {
      await client.close();
    },
  };
}
