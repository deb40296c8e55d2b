import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import { apiPlugin } from './http/api.js';
import { sendError, setStandardHeaders, toApiError } from './http/envelope.js';
import { ApiError } from './http/errors.js';
import { oauthPlugin } from './oauth/index.js';
import { rateLimitPlugin } from './http/rate-limit.js';
import { setSecurityHeaders } from './http/security.js';
import { filesPlugin } from './collections/files/download.js';
import { docsPlugin } from './http/docs.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
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
}

/** Never log a query string: it may carry codes or (refused) credentials. */
export const redactUrl = (url: string) => url.split('?')[0];

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.https ? { https: opts.https } : {}),
    logger: opts.logger ?? false,
    bodyLimit: 1024 * 1024,
    exposeHeadRoutes: false,
    return503OnClosing: true,
    trustProxy: false,
    ajv: { customOptions: { removeAdditional: false } },
  });
  app.decorate('config', opts.config);
  app.decorate('database', opts.database);
  app.decorate('clock', opts.clock ?? Date.now);

  const hsts = opts.config.publicUrl.startsWith('https:');
  app.addHook('onRequest', async (_request, reply) => {
    setStandardHeaders(reply);
    setSecurityHeaders(reply, hsts);
  });

  app.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) request.log.error({ err }, 'request failed');
    return sendError(reply, apiError);
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, new ApiError('notFound')));

  await app.register(rateLimitPlugin);
  await app.register(oauthPlugin);
  await app.register(filesPlugin);
  await app.register(docsPlugin);
  await app.register(apiPlugin);
  return app;
}
