/** Loopback hosts may use plain http, for development (PRODUCT §2). */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A private-use URI scheme (RFC 8252 §7.1): a reverse domain name, so it contains a period. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;
/** The loopback hosts where any port matches for a public client (RFC 8252 §7.3); not `localhost` (§8.3). */
const ANY_PORT_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * A URI a client may register: absolute https, or http on loopback; never a fragment (RFC 6749 §3.1.2).
 * A public client (PRODUCT §13) may also register a private-use scheme (`com.example.crew:/callback`).
 */
export function isAllowedRedirectUri(uri: string, publicClient = false): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash !== '' || uri.includes('#') || url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  if (publicClient && PRIVATE_USE_SCHEME.test(url.protocol) && url.host === '') return true;
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/**
 * RFC 8252 §7.3: for a public client a loopback URI registered on 127.0.0.1 or [::1] matches the
 * same URI on any port (the app listens on whatever port the system gives it).
 */
function sameButPort(registered: string, sent: string): boolean {
  let r: URL, s: URL;
  try {
    r = new URL(registered);
    s = new URL(sent);
  } catch {
    return false;
  }
  if (r.protocol !== 'http:' || s.protocol !== 'http:' || !ANY_PORT_HOSTS.has(r.hostname)) return false;
  if (s.hostname !== r.hostname || sent.includes('#') || s.username !== '' || s.password !== '') return false;
  // Everything but the port must match: the path and the query.
  return r.pathname === s.pathname && r.search === s.search;
}

/**
 * The redirect URI to answer to: the one sent when it is registered (exact string match), else
 * the client's only registered URI. undefined means "never redirect": show an error page.
 */
export function resolveRedirectUri(
  registered: string[],
  sent: string | undefined,
  publicClient = false,
): string | undefined {
  if (sent === undefined) {
    const only = registered.length === 1 ? registered[0] : undefined;
    return only !== undefined && isAllowedRedirectUri(only, publicClient) ? only : undefined;
  }
  const exact = registered.find((r) => r === sent);
  if (exact !== undefined) return isAllowedRedirectUri(exact, publicClient) ? exact : undefined;
  if (publicClient && registered.some((r) => isAllowedRedirectUri(r, true) && sameButPort(r, sent))) return sent;
  return undefined;
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
