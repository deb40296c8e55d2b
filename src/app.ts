import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import { apiPlugin } from './http/api.js';
import { STANDARD_HEADERS, sendError, toApiError } from './http/envelope.js';
import { ApiError } from './errors.js';
import { oauthPlugin } from './oauth/index.js';
import { oauthRateLimitPlugin } from './oauth/rate-limits.js';
import { rateLimitPlugin } from './http/rate-limit/index.js';
import { securityHeaders } from './http/security.js';
import { fileDownloadsPlugin } from './http/file-downloads.js';
import { exportPlugin } from './http/export.js';
import { calendarFeedPlugin, calendarNotFound, isCalendarPath } from './http/calendar-feed.js';
import { docsPlugin } from './http/docs.js';
import { createServices, type Services } from './services.js';
import { healthPlugin } from './http/health.js';
import { requestIdOptions } from './http/logging.js';
import { metricsPlugin } from './http/metrics.js';
import { routeTable } from './http/route-table.js';
import { notFoundOr405 } from './http/route.js';
import { sharePagesPlugin } from './http/share/pages.js';
import { startMailWorker, type MailWorker } from './mail/worker.js';
import {
  startDeliveryWorker,
  type DeliveryWorker,
  type RequestActivity,
} from './collections/webhooks/deliveries/worker.js';
import { startRetention, type Retention } from './retention.js';
import { startFilesMaintenance, type FilesMaintenance } from './collections/files/maintenance.js';
import { startAgreementRoll, type AgreementRoll } from './collections/agreements/roll.js';
import { watchBody } from './http/input/body-timeout.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    /** The registry, the write pipeline and the rest, made once for the process. */
    services: Services;
    /** Milliseconds since the epoch; tests inject their own clock. */
    clock: () => number;
  }
}

export interface AppOptions {
  config: Config;
  database: Database;
  clock?: () => number;
  logger?: FastifyServerOptions['logger'];
  https?: { key: Buffer; cert: Buffer };
  /** false: no background senders (webhooks, mail) and no retention purges in this app (tests that drive them themselves). */
  deliveries?: boolean;
}

export { redactUrl } from './http/logging.js';

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.https ? { https: opts.https } : {}),
    logger: opts.logger ?? false,
    ...requestIdOptions,
    bodyLimit: 1024 * 1024,
    exposeHeadRoutes: false,
    // Fastify's own 503 while closing is not in the envelope; the onRequest hook below answers instead.
    return503OnClosing: false,
    // Behind a balancer (docs/deployment.md): the client's address from the named proxies' X-Forwarded-For.
    trustProxy: opts.config.trustProxy ?? false,
    ajv: { customOptions: { removeAdditional: false } },
    // The router's own refusals (a path that is not percent-encoded UTF-8, a parameter past its
    // length) in the envelope, echoing nothing of the path; under /calendar/ the feeds' one 404.
    frameworkErrors: (err, request, reply) =>
      sendError(
        // Answered before the onRequest hook below: its headers are set here.
        reply.headers(headers).header('x-request-id', request.id),
        isCalendarPath(request.url)
          ? calendarNotFound()
          : err.code === 'FST_ERR_BAD_URL'
            ? new ApiError('badEncoding', 'the path')
            : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
              ? new ApiError('notFound')
              : toApiError(err),
      ),
  });
  app.decorate('config', opts.config);
  app.decorate('database', opts.database);
  app.decorate('services', createServices(opts.config, opts.database));
  app.decorate('clock', opts.clock ?? Date.now);

  const hsts = opts.config.publicUrl.startsWith('https:');
  // During a graceful shutdown, requests still arriving on open connections are refused (in the
  // envelope, with Connection: close) while those already in flight finish.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Answers finishing during the shutdown close their connection, or an idle keep-alive socket
  // would hold the server open until its timeout. Hooks run on every request: callback style, no
  // promise per hook, and one header object made once (the profile of W1/W3).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  const headers = { ...STANDARD_HEADERS, ...securityHeaders(hsts) };
  // The delivery worker steps aside while requests keep the process busy (src/collections/webhooks/deliveries/worker.ts).
  const activity: RequestActivity = { lastRequestAt: 0 };
  const { bodyTimeoutMs } = opts.config;
  const isClosing = () => closing;
  app.addHook('onRequest', (request, reply, done) => {
    activity.lastRequestAt = performance.now();
    reply.headers(headers).header('x-request-id', request.id);
    // A body still arriving (an upload) must keep arriving (src/http/input/body-timeout.ts).
    if (!request.raw.complete) watchBody(request, reply, bodyTimeoutMs, isClosing);
    if (!closing) return done();
    sendError(
      reply.header('connection', 'close'),
      new ApiError('unavailable', 'the server is shutting down', { 'retry-after': '1' }),
    );
  });

  app.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err);
    // A 503 of the file store carries the store's own words as its cause: logged, never answered.
    if (apiError.status >= 500) request.log.error({ err }, 'request failed');
    return sendError(reply, apiError);
  });
  routeTable(app);
  // Reached for methods no route takes (TRACE, PROPFIND, …): 405 with Allow where the path exists.
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      isCalendarPath(request.url) ? calendarNotFound() : notFoundOr405(app, request.method, request.url),
    ),
  );

  await app.register(metricsPlugin);
  await app.register(healthPlugin);
  // Webhook deliveries are sent in the background, never on a request's path
  // (src/collections/webhooks/deliveries/), and what is past its retention is purged (src/retention.ts).
  let worker: DeliveryWorker | undefined;
  let retention: Retention | undefined;
  app.addHook('onReady', async () => {
    if (opts.deliveries === false) return;
    worker = startDeliveryWorker(app.services, app.clock, app.log, activity);
    retention = startRetention(app.services, app.clock, app.log);
  });
  app.addHook('preClose', async () => {
    await Promise.all([worker?.stop(), retention?.stop()]);
  });
  // Service agreements' occurrences follow the day on every process (PRODUCT §16).
  let roll: AgreementRoll | undefined;
  app.addHook('onReady', async () => {
    roll = startAgreementRoll(app.services, app.clock, app.log);
  });
  app.addHook('preClose', async () => {
    await roll?.stop();
  });
  // Messages go out the same way, through SMTP_URL (src/mail/); without it they stay queued.
  let mailer: MailWorker | undefined;
  app.addHook('onReady', async () => {
    if (opts.deliveries !== false) mailer = startMailWorker(app.services, app.clock, app.log);
  });
  app.addHook('preClose', async () => {
    await mailer?.stop();
  });
  // The file store's housekeeping: leftovers of dead processes, removals that waited for the store.
  let files: FilesMaintenance | undefined;
  app.addHook('onReady', async () => {
    files = await startFilesMaintenance(app.services, app.clock, app.log);
  });
  app.addHook('preClose', async () => {
    await files?.stop();
  });
  // After the server stopped: staging of requests whose connections were closed is removed first.
  app.addHook('onClose', async () => app.services.blobs.close());

  await app.register(rateLimitPlugin);
  await app.register(oauthRateLimitPlugin);
  await app.register(oauthPlugin);
  await app.register(fileDownloadsPlugin);
  await app.register(calendarFeedPlugin);
  await app.register(exportPlugin);
  await app.register(sharePagesPlugin);
  await app.register(docsPlugin);
  await app.register(apiPlugin);
  return app;
}
