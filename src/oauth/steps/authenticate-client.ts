import OAuth2Server from '@node-oauth/oauth2-server';
import type { Executor } from '../../db/tx.js';
import { authenticateClient, type OAuthClient } from '../clients.js';
import type { ClientCredentials } from '../client-auth.js';

const { InvalidClientError, UnauthorizedClientError } = OAuth2Server;

/**
 * The client behind a request's credentials, as the token endpoint decides it (the library's
 * getClient with our model): no secret, an unknown client, a wrong secret and a revoked client are
 * all the same invalid_client (401, WWW-Authenticate: Basic); an uncertified one is refused.
 */
export async function authenticatedClient(db: Executor, credentials: ClientCredentials): Promise<OAuthClient> {
  const { clientId, clientSecret } = credentials;
  if (!clientId || !clientSecret) throw new InvalidClientError('Invalid client: cannot retrieve client credentials');
  const client = await authenticateClient(db, clientId, clientSecret);
  if (!client || client.revoked) throw new InvalidClientError('Invalid client: client is invalid');
  if (!client.certified) throw new UnauthorizedClientError('the client is not certified by the service operator');
  return client;
}
