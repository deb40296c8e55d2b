import type { OAuthClient } from '../grants/clients.js';

/**
 * PRODUCT §2: a client the operator has not certified is refused before the owner is asked
 * anything (no login, no consent): its users would only learn at the token endpoint otherwise.
 */
export function checkCertified(client: OAuthClient): [string, string] | undefined {
  return client.certified ? undefined : ['unauthorized_client', 'the client is not certified by the service operator'];
}
