import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import client from 'prom-client';
import { safeEqual } from '../auth/secrets.js';
import { registry as collections } from '../collections/index.js';
import { sendError } from './envelope.js';
import { ApiError } from '../errors.js';
import { parsePath } from './route.js';
import type { Database } from '../db/index.js';
import { backlog } from '../collections/webhooks/deliveries/repository.js';
import { DELIVERY_OUTCOMES, observeDeliveryAttempts } from '../collections/webhooks/deliveries/attempt.js';

/**
 * Every metric of the process, in one registry (one process, one app; with WORKERS > 1 each worker
 * answers for itself). Other modules count with one-line calls to the functions below, so the code
 * they instrument stays as it was. Labels only ever hold values from a fixed set: route templates,
 * known collection names, statuses, grant types; never a URL, an id or a login.
 */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const requests = new client.Counter({
  name: 'fsm_http_requests_total',
  help: 'HTTP requests answered, by method, route template, collection and status',
  labelNames: ['method', 'route', 'collection', 'status'] as const,
  registers: [registry],
});
const requestDuration = new client.Histogram({
  name: 'fsm_http_request_duration_seconds',
  help: 'Time from the request arriving to the answer sent, by method, route template, collection and status',
  labelNames: ['method', 'route', 'collection', 'status'] as const,
  buckets: SECONDS,
  registers: [registry],
});
const rateLimitRefusals = new client.Counter({
  name: 'fsm_rate_limit_refusals_total',
  help: 'Requests refused with 429 by a rate limit, by limiter (api: per access token, auth: the authorization server)',
  labelNames: ['limiter'] as const,
  registers: [registry],
});
const signInFailures = new client.Counter({
  name: 'fsm_sign_in_failures_total',
  help: 'Failed sign-ins on the authorization pages, by reason (invalid: wrong login or password, locked: throttled login)',
  labelNames: ['reason'] as const,
  registers: [registry],
});
const tokenGrants = new client.Counter({
  name: 'fsm_oauth_token_grants_total',
  help: 'Access tokens issued by /oauth2/token, by grant type',
  labelNames: ['grant_type'] as const,
  registers: [registry],
});
const queryDuration = new client.Histogram({
  name: 'fsm_db_query_duration_seconds',
  help: 'Database statement time, by dialect and outcome',
  labelNames: ['dialect', 'outcome'] as const,
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers: [registry],
});

const deliveryAttempts = new client.Counter({
  name: 'fsm_webhook_delivery_attempts_total',
  help:
    'Webhook delivery attempts, by outcome (succeeded: a 2xx answer; failed: another answer; gone: 410, which disables the webhook; ' +
    'refused: the target address is refused or does not resolve; timeout: no answer in time; network: no connection; purged: the event was purged first)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
// Measured when /metrics is scraped, from the database (src/collections/webhooks/deliveries/repository.ts, backlog).
const deliveriesWaiting = new client.Gauge({
  name: 'fsm_webhook_deliveries_waiting',
  help: 'Webhook deliveries waiting for their first attempt, in every account (those of paused or disabled webhooks not counted)',
  registers: [registry],
});
const oldestWaiting = new client.Gauge({
  name: 'fsm_webhook_delivery_oldest_waiting_seconds',
  help: 'How long the oldest webhook delivery waiting for its first attempt has waited, in seconds (0 when none waits)',
  registers: [registry],
});

// Known series start at 0, so a rate() or an alert on them works before the first event.
for (const outcome of DELIVERY_OUTCOMES) deliveryAttempts.inc({ outcome }, 0);
for (const limiter of ['api', 'auth']) rateLimitRefusals.inc({ limiter }, 0);
for (const reason of ['invalid', 'locked']) signInFailures.inc({ reason }, 0);
for (const grant_type of ['authorization_code', 'refresh_token']) tokenGrants.inc({ grant_type }, 0);

/** PostgreSQL pools whose connections are reported (SQLite has one connection and no pool). */
export interface PoolSource {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}
const pools = new Set<PoolSource>();
new client.Gauge({
  name: 'fsm_db_pool_connections',
  help: 'PostgreSQL pool connections: total open, idle, and requests waiting for one',
  labelNames: ['state'] as const,
  registers: [registry],
  collect() {
    const sum = (k: keyof PoolSource) => [...pools].reduce((n, p) => n + p[k], 0);
    this.set({ state: 'total' }, sum('totalCount'));
    this.set({ state: 'idle' }, sum('idleCount'));
    this.set({ state: 'waiting' }, sum('waitingCount'));
  },
});

export const countRateLimitRefusal = (bucket: string) =>
  rateLimitRefusals.inc({ limiter: bucket.slice(0, Math.max(0, bucket.indexOf(':'))) || 'other' });
export const countSignInFailure = (reason: 'invalid' | 'locked') => signInFailures.inc({ reason });
export const countTokenGrant = (grantType: string | undefined) =>
  tokenGrants.inc({
    grant_type: grantType === 'authorization_code' || grantType === 'refresh_token' ? grantType : 'other',
  });
// What became of each webhook delivery attempt, as the worker reports it (src/collections/webhooks/deliveries/attempt.ts).
observeDeliveryAttempts((outcome) => deliveryAttempts.inc({ outcome }));
/** Given to the database as its query observer (src/db/index.ts). */
export const observeQuery = (dialect: string, seconds: number, failed: boolean): void =>
  queryDuration.observe({ dialect, outcome: failed ? 'error' : 'ok' }, seconds);
export const watchPool = (pool: PoolSource): (() => void) => {
  pools.add(pool);
  return () => pools.delete(pool);
};

const API_FORMS = ['/:collection', '/:collection/:action', '/:collection/:item', '/:collection/:item/:action'];

/** The route template and collection of a request: the API's one wildcard route is split by URL form. */
export function routeLabels(request: FastifyRequest): { route: string; collection: string } {
  const template = request.routeOptions.url;
  if (template === undefined) return { route: 'unmatched', collection: '' };
  // The API's routes (one wildcard today; templates naming :collection would do as well).
  if (template !== '/*' && !template.includes(':collection')) return { route: template, collection: '' };
  const r = parsePath(request.url);
  if (!r) return { route: template === '/*' ? 'unmatched' : template, collection: '' };
  return {
    route: API_FORMS[(r.item !== undefined ? 2 : 0) + (r.action !== undefined ? 1 : 0)],
    collection: collections.get(r.collection) !== undefined ? r.collection : 'unknown',
  };
}

/**
 * The series of one label set, looked up by a plain string: prom-client hashes a label object on
 * every call, which was most of the cost of counting a request (about 6 µs against under 3 µs).
 * The label sets are bounded (routes x collections x methods x statuses), the map too.
 */
const series = new Map<
  string,
  { count: client.Counter.Internal; time: client.Histogram.Internal<'method' | 'route' | 'collection' | 'status'> }
>();

function record(request: FastifyRequest, reply: FastifyReply): void {
  const { route, collection } = routeLabels(request);
  const key = `${request.method} ${route} ${collection} ${reply.statusCode}`;
  let s = series.get(key);
  if (!s) {
    const labels = { method: request.method, route, collection, status: String(reply.statusCode) };
    s = { count: requests.labels(labels), time: requestDuration.labels(labels) };
    if (series.size < 10_000) series.set(key, s);
  }
  s.count.inc();
  s.time.observe(reply.elapsedTime / 1000);
}

/**
 * The delivery gauges, read from the database at each scrape (one statement over a partial
 * index). With the database unreachable they read NaN, so the scrape still answers with the rest.
 */
async function measureBacklog(database: Database, now: number, log: FastifyBaseLogger): Promise<void> {
  try {
    const b = await backlog(database);
    deliveriesWaiting.set(b.waiting);
    oldestWaiting.set(b.oldest === null ? 0 : Math.max(0, now - b.oldest) / 1000);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'metrics: the webhook delivery backlog could not be read');
    deliveriesWaiting.set(NaN);
    oldestWaiting.set(NaN);
  }
}

/** The bearer secret of METRICS_TOKEN, compared in constant time. */
function authorized(header: string | undefined, token: string): boolean {
  const m = /^Bearer (\S+)$/.exec(header ?? '');
  return m !== null && safeEqual(m[1], token);
}

/**
 * Counts every answer (onResponse, after it is sent) and serves GET /metrics when METRICS_TOKEN is
 * set. The scrape is not counted as a request by route, nor logged at info level.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onResponse', (request, reply, done) => {
      if (request.routeOptions.url !== '/metrics') record(request, reply);
      done();
    });
    const token = app.config.metricsToken;
    app.get('/metrics', { logLevel: 'warn' }, async (request, reply) => {
      // Off without a token: the same 404 as any unknown path (not the API's answer for a collection).
      if (!token) return sendError(reply, new ApiError('notFound'));
      if (!authorized(request.headers.authorization, token)) {
        return sendError(
          reply,
          new ApiError('tokenInvalid', 'the metrics token is missing or wrong', {
            'www-authenticate': 'Bearer realm="metrics"',
          }),
        );
      }
      await measureBacklog(app.database, app.clock(), request.log);
      const text = await registry.metrics();
      return reply.code(200).header('content-type', registry.contentType).send(text);
    });
  },
  { name: 'metrics' },
);
