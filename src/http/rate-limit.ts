import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { sql } from 'kysely';
import { prepared, run, slot } from '../db/compiled.js';
import type { Database } from '../db/index.js';
import { ApiError } from './errors.js';

/**
 * Fixed-window rate limits (PRODUCT §3, 429 with Retry-After): per access token on the API; on
 * /oauth2/* per client address or per client id (PRODUCT §8). Counters live where every process
 * sees them (PRODUCT §5): the database, or Redis when REDIS_URL is set. Each counted request costs
 * one statement.
 */
export const WINDOW_MS = 60_000;

/** Counts one hit in a bucket's window and returns the hits so far in that window. */
export interface CounterStore {
  hit(bucket: string, windowStart: number, windowMs: number): Promise<number>;
  close?(): Promise<void>;
}

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  resetS: number;
}

/**
 * The upsert, compiled once (it runs on every API request). A stale window (a slower process, a
 * clock behind) counts into the newer one rather than resetting it.
 */
const hitQuery = (database: Database) =>
  prepared<{ hits: number }>(database.db, 'rate-limit hit', () =>
    sql<{ hits: number }>`
      insert into rate_limits (bucket, window_start, hits) values (${slot('bucket')}, ${slot('windowStart')}, 1)
      on conflict (bucket) do update set
        hits = case when excluded.window_start > rate_limits.window_start then 1 else rate_limits.hits + 1 end,
        window_start = case when excluded.window_start > rate_limits.window_start then excluded.window_start else rate_limits.window_start end
      returning hits`.compile(database.db));

/** The database store: one upsert per hit, valid on SQLite (3.35+) and PostgreSQL alike. */
export function sqlStore(database: Database): CounterStore {
  let lastSweep = 0;
  return {
    async hit(bucket, windowStart, windowMs) {
      const rows = await run(database.db, hitQuery(database).bind({ bucket, windowStart }));
      if (windowStart - lastSweep >= windowMs) {
        // Buckets idle for a whole window are dropped, at most once a window per process, off the request path.
        lastSweep = windowStart;
        sql`delete from rate_limits where window_start < ${windowStart - windowMs}`.execute(database.db).catch(() => {});
      }
      return Number(rows[0].hits);
    },
  };
}

export class RateLimiter {
  /** `limit` is read on every hit so a running app (or a test) can change it; 0 means off. */
  constructor(
    private readonly store: CounterStore,
    private readonly limit: () => number,
    private readonly clock: () => number,
    private readonly windowMs = WINDOW_MS,
  ) {}

  get enabled(): boolean {
    return this.limit() > 0;
  }

  async take(bucket: string): Promise<Decision> {
    const limit = this.limit();
    const now = this.clock();
    const windowStart = now - (now % this.windowMs);
    const hits = await this.store.hit(bucket, windowStart, this.windowMs);
    return {
      allowed: hits <= limit,
      limit,
      remaining: Math.max(0, limit - hits),
      resetS: Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000)),
    };
  }
}

/** The IETF draft's fields (draft-ietf-httpapi-ratelimit-headers), and Retry-After once refused. */
export function rateLimitHeaders(d: Decision): Record<string, string> {
  const h: Record<string, string> = {
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(d.resetS),
  };
  if (!d.allowed) h['retry-after'] = String(d.resetS);
  return h;
}

/** Counts the request in `bucket`; sets the headers, and refuses with 429 (error 1429) over the limit. */
export async function enforceRateLimit(reply: FastifyReply, limiter: RateLimiter, bucket: string): Promise<void> {
  if (!limiter.enabled) return;
  const d = await limiter.take(bucket);
  const headers = rateLimitHeaders(d);
  if (!d.allowed) throw new ApiError('rateLimited', `retry in ${d.resetS} s`, headers);
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
}

/** API bucket: the access token's hash, as `authenticate` computed it (the plain token is never stored). */
export const tokenBucket = (tokenHash: string): string => `api:${tokenHash}`;
/** Auth bucket: the client's address (the socket's; `trustProxy` decides what that is behind a proxy). */
export const addressBucket = (request: FastifyRequest): string => `auth:${request.ip}`;

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: { api: RateLimiter; auth: RateLimiter };
  }
}

/**
 * Decorates the app with both limiters. The API dispatcher applies the api limiter once the token
 * is known; the authorization server decides what its limiter counts by (src/oauth/rate-limits.ts).
 */
export const rateLimitPlugin = fp(
  async (app: FastifyInstance) => {
    // The Redis client is loaded only when configured: importing it costs every process ~20 MB of
    // RSS (measured), which the peak-RSS budget of a worker (200 MB) cannot spare.
    const store = app.config.redisUrl ? await (await import('./rate-limit-redis.js')).openRedisStore(app.config.redisUrl) : sqlStore(app.database);
    if (store.close) app.addHook('onClose', async () => store.close!());
    app.decorate('rateLimits', {
      api: new RateLimiter(store, () => app.config.rateLimitApi, () => app.clock()),
      auth: new RateLimiter(store, () => app.config.rateLimitAuth, () => app.clock()),
    });
  },
  { name: 'rate-limit' },
);
