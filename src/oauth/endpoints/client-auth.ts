import OAuth2Server from '@node-oauth/oauth2-server';

const { InvalidClientError, InvalidRequestError } = OAuth2Server;

export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
}

/** RFC 6749 Appendix B: form-url-decoding, which the library's basic-auth parser omits. */
function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw new InvalidClientError('Invalid client: malformed Basic credentials');
  }
}

function parseBasic(header: string): { clientId: string; clientSecret: string } {
  const m = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 1) throw new InvalidClientError('Invalid client: malformed Basic credentials');
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
}

/**
 * The client's credentials from exactly one place (RFC 6749 §2.3.1): the Basic header or the body.
 * A secret in both is invalid_request, as is a body client_id that differs from the header's.
 */
export function clientCredentials(authorization: string | undefined, body: Record<string, string>): ClientCredentials {
  if (authorization === undefined) return { clientId: body.client_id, clientSecret: body.client_secret };
  const creds = parseBasic(authorization);
  if (body.client_secret !== undefined)
    throw new InvalidRequestError('Invalid request: client credentials sent both in the header and in the body');
  if (body.client_id !== undefined && body.client_id !== creds.clientId)
    throw new InvalidRequestError('Invalid request: `client_id` differs from the Basic credentials');
  return creds;
}
