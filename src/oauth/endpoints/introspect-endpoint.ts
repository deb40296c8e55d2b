import type { FastifyInstance } from 'fastify';
import { clientTokenRoute } from './client-token-route.js';
import { PATHS } from '../../auth/endpoints.js';
import type { TokenRecord } from '../grants/token-records.js';

/** RFC 7662 §2.2 members of an active token; the scope is the literal `default` (PRODUCT §2). */
function describe(token: TokenRecord) {
  return {
    active: true,
    scope: 'default',
    client_id: token.clientId,
    ...(token.login !== null ? { username: token.login } : {}),
    sub: String(token.userId),
    exp: Math.floor(token.expiresAt / 1000),
    iat: Math.floor(token.created / 1000),
    // RFC 7662 names the access token's type (RFC 6749 §7.1); a refresh token is not a bearer token.
    token_type: token.kind === 'access' ? 'Bearer' : 'refresh_token',
    permissions: token.permissions,
  };
}

/**
 * RFC 7662 token introspection, client-authenticated as at the token endpoint. A client learns
 * only about its own tokens: unknown, expired, revoked and other clients' tokens are all
 * `{"active": false}` and nothing more (§2.2).
 */
export async function introspectEndpoint(app: FastifyInstance): Promise<void> {
  // A public client cannot introspect (PRODUCT §13): it cannot authenticate.
  clientTokenRoute(
    app,
    PATHS.introspection,
    async (_db, token) => (token?.live ? describe(token) : { active: false }),
    false,
  );
}
