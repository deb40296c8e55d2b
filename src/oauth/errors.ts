import OAuth2Server from '@node-oauth/oauth2-server';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { asUnavailable, sendError, sendJson } from '../http/envelope.js';
import { ApiError } from '../errors.js';

const { OAuthError, InvalidRequestError } = OAuth2Server;

/**
 * The RFC 6749 §5.2 error response of the client endpoints (token, and revocation and introspection,
 * RFC 7009 §2.2.1, RFC 7662 §2.3): the only place it is written.
 */
export function sendTokenError(reply: FastifyReply, err: unknown, log: FastifyBaseLogger): FastifyReply {
  // RATE_LIMIT_AUTH: the 429 of the API envelope (error 1429, Retry-After), as on every JSON endpoint.
  if (err instanceof ApiError && err.status === 429) return sendError(reply, err);
  // The database (or Redis) is down: a try-again answer as the API's 503, in RFC 6749's words.
  const down = asUnavailable((err as { inner?: unknown } | undefined)?.inner ?? err);
  if (down) {
    for (const [k, v] of Object.entries(down.headers)) reply.header(k, v);
    return sendJson(reply, 503, {
      error: 'temporarily_unavailable',
      error_description: 'the service is temporarily unavailable; try again shortly',
    });
  }
  if (err instanceof ApiError && err.status < 500) {
    // Refused before the endpoint ran: keep its status and headers.
    for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
    return sendJson(reply, err.status, { error: 'invalid_request', error_description: err.message });
  }
  let e = err instanceof OAuthError ? err : undefined;
  if (!e && (err as { statusCode?: number })?.statusCode === 413)
    e = new InvalidRequestError('Invalid request: the body is too large');
  // The library reports its own failures as 503 server_error; ours are 500 without details.
  if (!e || e.name === 'server_error') {
    log.error({ err: (e as { inner?: unknown } | undefined)?.inner ?? err }, 'token endpoint failed');
    return sendJson(reply, 500, { error: 'server_error', error_description: 'internal error' });
  }
  let status = e.code;
  // RFC 6749 §5.2: 401 with the scheme for a client that failed to authenticate.
  if (e.name === 'invalid_client') {
    status = 401;
    reply.header('www-authenticate', 'Basic realm="oauth2", charset="UTF-8"');
  }
  return sendJson(reply, status, { error: e.name, error_description: e.message });
}
