import type { FastifyInstance } from 'fastify';
import { sendJson } from '../http/envelope.js';
import { clientCredentials } from './client-auth.js';
import { PATHS } from './endpoints.js';
import { sendTokenError } from './errors.js';
import { authenticatedClient } from './steps/authenticate-client.js';
import { clientRateLimit } from './steps/client-rate-limit.js';
import { formParams } from './steps/form-params.js';
import { tokenParam } from './steps/token-param.js';
import { findClientToken, revokeTokenRecord } from './token-records.js';

/**
 * RFC 7009 token revocation, client-authenticated as at the token endpoint. 200 whether or not the
 * token existed (§2.2): an unknown, already revoked or another client's token changes nothing
 * and tells the caller nothing.
 */
export async function revokeEndpoint(app: FastifyInstance): Promise<void> {
  const db = app.database.db;
  app.post(PATHS.revocation, async (request, reply) => {
    const limit = clientRateLimit(app, request, reply);
    try {
      const params = formParams(request);
      const client = await authenticatedClient(db, clientCredentials(request.headers.authorization, params));
      await limit.authenticated(client.clientId);
      const token = await findClientToken(db, tokenParam(params), client.clientId, app.clock());
      if (token) await revokeTokenRecord(db, token);
      return sendJson(reply, 200, {});
    } catch (err) {
      return sendTokenError(reply, await limit.failed(err), request.log);
    }
  });
}
