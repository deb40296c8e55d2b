import OAuth2Server from '@node-oauth/oauth2-server';
import type { FastifyInstance } from 'fastify';
import { clientCredentials } from './client-auth.js';
import { sendJson } from '../../http/envelope.js';
import { sendTokenError } from '../errors.js';
import { countTokenGrant } from '../../http/metrics.js';
import { CodeGrant, RefreshGrant } from '../grants/grants.js';
import { GRANTS, createModel, modelClient } from '../grants/model.js';
import { ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_IDLE_S } from '../../auth/tokens.js';
import { PATHS } from '../../auth/endpoints.js';
import { authenticatedClient } from '../steps/authenticate-client.js';
import { clientRateLimit } from '../steps/client-rate-limit.js';
import { formParams } from '../steps/form-params.js';

const { UnsupportedGrantTypeError, Request, Response } = OAuth2Server;

export async function tokenEndpoint(app: FastifyInstance): Promise<void> {
  const model = createModel(app.database, app.clock);
  const server = new OAuth2Server({
    model: model as unknown as OAuth2Server.ServerOptions['model'],
    accessTokenLifetime: ACCESS_TOKEN_TTL_S,
    refreshTokenLifetime: REFRESH_TOKEN_IDLE_S,
    alwaysIssueNewRefreshToken: false,
    // Our model's getClient decides who must send a secret (confidential clients) and who must not
    // (public clients, PRODUCT §13); the library would otherwise insist on one for refresh grants.
    requireClientAuthentication: { authorization_code: false, refresh_token: false },
    extendedGrantTypes: { authorization_code: CodeGrant, refresh_token: RefreshGrant } as never,
  });

  app.post(PATHS.token, async (request, reply) => {
    const limit = clientRateLimit(app, request, reply);
    try {
      const params = formParams(request);
      const credentials = clientCredentials(request.headers.authorization, params);
      const { clientId, clientSecret } = credentials;
      // Credentials go to the library in the body, already decoded; it never sees the header.
      const body: Record<string, string> = { ...params };
      delete body.client_id;
      delete body.client_secret;
      if (clientId !== undefined) body.client_id = clientId;
      if (clientSecret !== undefined) body.client_secret = clientSecret;
      // The library also knows password and client_credentials; we offer neither.
      if (body.grant_type !== undefined && !GRANTS.includes(body.grant_type)) {
        throw new UnsupportedGrantTypeError('Unsupported grant type: `grant_type` is invalid');
      }
      // Authenticated here first, with the code revocation and introspection use, so the request
      // is counted in its client's bucket. The library then asks the model for the client: it is
      // given this one, not looked up and its secret hashed a second time.
      const client = await authenticatedClient(app.database.db, credentials);
      await limit.authenticated(client.clientId);
      const authenticated = { ...model, getClient: async () => modelClient(client) };
      // We parsed the form already; the library's content-type check only needs to see one.
      const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' };
      const req = new Request({ method: 'POST', headers, query: {}, body });
      // The library merges these options over the server's (its TokenOptions type omits `model`).
      const options = { model: authenticated } as unknown as OAuth2Server.TokenOptions;
      const token = await server.token(req, new Response(), options);
      countTokenGrant(body.grant_type);
      // The library derives expires_in from the clock at response time (3599); the spec says 3600.
      const out: Record<string, unknown> = {
        access_token: token.accessToken,
        token_type: 'Bearer',
        expires_in: ACCESS_TOKEN_TTL_S,
      };
      if (token.refreshToken) out.refresh_token = token.refreshToken;
      // No-store, no-cache and the spec's headers come from the app-wide hook, as on errors.
      return sendJson(reply, 200, out);
    } catch (err) {
      return sendTokenError(reply, await limit.failed(err), request.log);
    }
  });
}
