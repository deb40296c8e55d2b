import type { FastifyInstance } from 'fastify';
import { clientTokenRoute } from './client-token-route.js';
import { PATHS } from '../../auth/endpoints.js';
import { revokeTokenRecord } from '../grants/token-records.js';

/**
 * RFC 7009 token revocation, client-authenticated as at the token endpoint. 200 whether or not the
 * token existed (§2.2): an unknown, already revoked or another client's token changes nothing
 * and tells the caller nothing.
 */
export async function revokeEndpoint(app: FastifyInstance): Promise<void> {
  clientTokenRoute(app, PATHS.revocation, async (db, token) => {
    if (token) await revokeTokenRecord(db, token);
    return {};
  });
}
