import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.js';
import { countRateLimitRefusal } from '../metrics.js';

/**
 * Rate limits (PRODUCT §3, 429 with Retry-After): per access token on the API; on /oauth2/* per
 * client address or per client id (PRODUCT §8). Counted by @fastify/rate-limit: a fixed window of
 * a minute per bucket, starting at the bucket's first request. In process by default (its
 * LocalStore, no I/O: each process counts on its own, see README "Settings"); in Redis when
 * REDIS_URL is set, one counter across every process (redis.ts).
 */
export const WINDOW_MS = 60_000;
/** Buckets one process keeps in memory (least recently used dropped first). */
const LOCAL_BUCKETS = 10_000;

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  resetS: number;
}

/** What the library's limiter is asked for: the bucket and its limit, set on the request just before. */
const BUCKET = Symbol('rate-limit bucket');
type Counted = FastifyRequest & { [BUCKET]?: { key: string; limit: number } };
type Check = ReturnType<FastifyInstance['createRateLimit']>;

export class RateLimiter {
  /** `limit` is read on every hit so a running app (or a test) can change it; 0 means off. */
  constructor(
    private readonly check: Check,
    private readonly limit: () => number,
  ) {}

  get enabled(): boolean {
    return this.limit() > 0;
  }

  async take(request: FastifyRequest, bucket: string): Promise<Decision> {
    (request as Counted)[BUCKET] = { key: bucket, limit: this.limit() };
    const r = await this.check(request);
    if (r.isAllowed) throw new Error('rate limit: no allow list is configured');
    return { allowed: !r.isExceeded, limit: r.max, remaining: r.remaining, resetS: Math.max(1, r.ttlInSeconds) };
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
  const d = await limiter.take(reply.request, bucket);
  const headers = rateLimitHeaders(d);
  if (!d.allowed) countRateLimitRefusal(bucket);
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
 * The library's own hooks stay off (`global: false`): we count where the bucket is known and
 * answer in the spec's envelope, through its `createRateLimit`.
 */
export const rateLimitPlugin = fp(
  async (app: FastifyInstance) => {
    // The Redis client is loaded only when configured: importing it costs every process ~20 MB of
    // RSS (measured), which the peak-RSS budget of a worker cannot spare.
    const redis = app.config.redisUrl
      ? await (await import('./redis.js')).openRedisStore(app.config.redisUrl)
      : undefined;
    if (redis) app.addHook('onClose', async () => redis.close());
    await app.register(fastifyRateLimit, {
      global: false,
      timeWindow: WINDOW_MS,
      cache: LOCAL_BUCKETS,
      keyGenerator: (request) => (request as Counted)[BUCKET]!.key,
      max: (request) => (request as Counted)[BUCKET]!.limit,
      ...(redis && { store: redis.Store }),
    });
    const check = app.createRateLimit();
    app.decorate('rateLimits', {
      api: new RateLimiter(check, () => app.config.rateLimitApi),
      auth: new RateLimiter(check, () => app.config.rateLimitAuth),
    });
  },
  { name: 'rate-limit' },
);
