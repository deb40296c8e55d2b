import OAuth2Server from '@node-oauth/oauth2-server';
import type { Executor } from '../../db/tx.js';
import { authenticateClient, findClient, type OAuthClient } from '../grants/clients.js';
import type { ClientCredentials } from '../endpoints/client-auth.js';

const { InvalidClientError, UnauthorizedClientError } = OAuth2Server;

/**
 * The client behind a request's credentials, as the token endpoint decides it (the library's
 * getClient with our model): no secret, an unknown client, a wrong secret and a revoked client are
 * all the same invalid_client (401, WWW-Authenticate: Basic); an uncertified one is refused.
 * A public client (PRODUCT §13) is named by `client_id` alone; a secret sent for it, even an empty
 * one, is invalid_client. `publicAllowed: false` (introspection) refuses public clients too.
 */
export async function authenticatedClient(
  db: Executor,
  credentials: ClientCredentials,
  publicAllowed = true,
): Promise<OAuthClient> {
  const { clientId, clientSecret } = credentials;
  if (!clientId) throw new InvalidClientError('Invalid client: cannot retrieve client credentials');
  let client: OAuthClient | undefined;
  if (clientSecret === undefined) {
    const found = await findClient(db, clientId);
    if (found?.public && publicAllowed) client = found;
  } else if (clientSecret !== '') client = await authenticateClient(db, clientId, clientSecret);
  if (!client || client.revoked) throw new InvalidClientError('Invalid client: client is invalid');
  if (!client.certified) throw new UnauthorizedClientError('the client is not certified by the service operator');
  return client;
}
