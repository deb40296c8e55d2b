/**
 * Security headers for a JSON API, set before anything can fail so errors carry them too.
 * Routes serving something else (the HTML sign-in pages, file downloads) replace the
 * Content-Security-Policy with their own; the spec's four headers are set apart (envelope.ts).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  // Nothing in a JSON answer may load, run or be framed.
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const HSTS = { 'strict-transport-security': 'max-age=31536000; includeSubDomains' };

/** The headers to set: the list above, and HSTS when the server is reached over https. */
export const securityHeaders = (hsts: boolean): Readonly<Record<string, string>> =>
  hsts ? { ...SECURITY_HEADERS, ...HSTS } : SECURITY_HEADERS;
