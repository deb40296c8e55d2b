import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { sendError, toApiError } from '../http/envelope.js';
import { addressBucket, enforceRateLimit } from '../http/rate-limit/index.js';
import { CLIENT_ENDPOINTS } from '../auth/endpoints.js';
import { sendPage } from './pages/html.js';
import { tooManyRequestsPage } from './pages/status-pages.js';

/*
 * RATE_LIMIT_AUTH, counted fairly (PRODUCT §8): the pages per client address (one browser, one
 * person), the client endpoints per client id once the client has authenticated, so a certified
 * client's server refreshing tokens for many owners from one address is not throttled like one
 * browser. What fails before a client is known counts against its address. The counters and
 * their store are the app's (src/http/rate-limit/index.ts); only the choice of bucket is made here.
 */

/** A client's bucket; client ids (`fsm_…`) never look like an address bucket (`auth:<ip>`). */
export const clientBucket = (clientId: string): string => `auth:client:${clientId}`;

/** A refusal on a page (a route of ours under /oauth2/) is a page with Retry-After; elsewhere the API envelope. */
function refuse(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const apiError = toApiError(err);
  if (apiError.status >= 500) request.log.error({ err }, 'rate limit check failed');
  if (apiError.status !== 429 || !request.routeOptions.url?.startsWith('/oauth2/')) return sendError(reply, apiError);
  for (const [k, v] of Object.entries(apiError.headers)) reply.header(k, v);
  return sendPage(reply, 429, tooManyRequestsPage(Number(apiError.headers['retry-after'])));
}

/** Counts every /oauth2/ request except the client endpoints, which count themselves (client-rate-limit.ts). */
async function perAddress(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  try {
    await enforceRateLimit(reply, app.rateLimits.auth, addressBucket(request));
  } catch (err) {
    refuse(request, reply, err);
  }
}

export const oauthRateLimitPlugin = fp(
  async (app: FastifyInstance) => {
    // Runs on every request: API requests pass straight through, without a promise (callback style).
    app.addHook('onRequest', (request, reply, done) => {
      // The route too: an absolute-form target (`POST http://host/oauth2/token`) is routed like the path.
      if (!request.url.startsWith('/oauth2/') && !request.routeOptions.url?.startsWith('/oauth2/')) return done();
      if (CLIENT_ENDPOINTS.includes(request.routeOptions.url ?? '')) return done();
      perAddress(app, request, reply).then(() => {
        if (!reply.sent) done();
      }, done);
    });
  },
  { name: 'oauth-rate-limit', dependencies: ['rate-limit'] },
);
