import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { sendJson } from '../../http/envelope.js';
import { clientCredentials } from './client-auth.js';
import { sendTokenError } from '../errors.js';
import { authenticatedClient } from '../steps/authenticate-client.js';
import { clientRateLimit } from '../steps/client-rate-limit.js';
import { formParams } from '../steps/form-params.js';
import { tokenParam } from '../steps/token-param.js';
import { findClientToken, type TokenRecord } from '../grants/token-records.js';

/**
 * The steps revocation (RFC 7009) and introspection (RFC 7662) share: the form, the client
 * authenticated as at the token endpoint, its rate limit, then the named token if it is that
 * client's (undefined otherwise: another client's token looks exactly like an unknown one).
 */
export function clientTokenRoute(
  app: FastifyInstance,
  path: string,
  answer: (db: Kysely<DB>, token: TokenRecord | undefined) => Promise<unknown>,
  /** Whether a public client (PRODUCT §13, by client_id alone) may call it: revocation yes, introspection no. */
  publicAllowed = true,
): void {
  const db = app.database.db;
  app.post(path, async (request, reply) => {
    const limit = clientRateLimit(app, request, reply);
    try {
      const params = formParams(request);
      const client = await authenticatedClient(
        db,
        clientCredentials(request.headers.authorization, params),
        publicAllowed,
      );
      await limit.authenticated(client.clientId);
      const token = await findClientToken(db, tokenParam(params), client.clientId, app.clock());
      return sendJson(reply, 200, await answer(db, token));
    } catch (err) {
      return sendTokenError(reply, await limit.failed(err), request.log);
    }
  });
}
