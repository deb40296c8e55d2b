/** Loopback hosts may use plain http, for development (PRODUCT §2). */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A URI a client may register: absolute https, or http on loopback; never a fragment (RFC 6749 §3.1.2). */
export function isAllowedRedirectUri(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash !== '' || uri.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/**
 * The redirect URI to answer to: the one sent when it is registered (exact string match), else
 * the client's only registered URI. undefined means "never redirect": show an error page.
 */
export function resolveRedirectUri(registered: string[], sent: string | undefined): string | undefined {
  const uri =
    sent === undefined ? (registered.length === 1 ? registered[0] : undefined) : registered.find((r) => r === sent);
  return uri !== undefined && isAllowedRedirectUri(uri) ? uri : undefined;
}

/** Appends response parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2). */
export function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}

/**
 * Every answer to the client, code or error, names the issuer (RFC 9207): a client talking to
 * several servers can tell which one answered (mix-up attacks, RFC 9700 §4.4).
 */
export function authorizationResponse(
  redirectUri: string,
  issuer: string,
  params: Record<string, string | undefined>,
): string {
  return withParams(redirectUri, { ...params, iss: issuer });
}
