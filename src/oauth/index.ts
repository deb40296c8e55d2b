import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { codeEndpoint } from './pages/code-endpoint.js';
import { sendTokenError } from './errors.js';
import { registerFormParser } from './pages/form.js';
import { sendPage } from './pages/html.js';
import { errorPage } from './pages/pages.js';
import { unavailablePage } from './pages/status-pages.js';
import { asUnavailable } from '../http/envelope.js';
import { ApiError } from '../errors.js';
import { tokenEndpoint } from './endpoints/token-endpoint.js';
import { revokeEndpoint } from './endpoints/revoke-endpoint.js';
import { introspectEndpoint } from './endpoints/introspect-endpoint.js';
import { metadataEndpoint } from './endpoints/metadata.js';
import { authorizationsPage } from './pages/authorizations-page.js';
import { CLIENT_ENDPOINTS } from '../auth/endpoints.js';

/**
 * The authorization server: /oauth2/code with its login and consent pages, /oauth2/token,
 * revocation, introspection, the connected-applications page and the RFC 8414 metadata.
 * An encapsulated context: its cookie support, form parser and error handler stay here.
 */
export async function oauthPlugin(app: FastifyInstance): Promise<void> {
  await app.register(cookie);
  registerFormParser(app);

  // Strict-Transport-Security (with an https PUBLIC_URL) and the rate limit come from the app;
  // errors raised in this context answer in the endpoint's own format (JSON RFC 6749 or a page).
  app.setErrorHandler((err, request, reply) => {
    if (CLIENT_ENDPOINTS.includes(request.routeOptions.url ?? '')) return sendTokenError(reply, err, request.log);
    if (err instanceof ApiError && err.status < 500) {
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
      return sendPage(reply, err.status, errorPage(err.message));
    }
    // The database is down: a page saying so, with Retry-After, as the API's 503.
    const down = asUnavailable(err);
    if (down) {
      for (const [k, v] of Object.entries(down.headers)) reply.header(k, v);
      return sendPage(reply, 503, unavailablePage());
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status === undefined || status >= 500) request.log.error({ err }, 'authorization page failed');
    return sendPage(
      reply,
      status === 413 ? 413 : status && status < 500 ? 400 : 500,
      errorPage('The request could not be processed.'),
    );
  });

  await app.register(codeEndpoint);
  await app.register(tokenEndpoint);
  await app.register(revokeEndpoint);
  await app.register(introspectEndpoint);
  await app.register(authorizationsPage);
  await app.register(metadataEndpoint);
}
