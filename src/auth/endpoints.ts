/**
 * Where each endpoint of the authorization server lives. The routes and the RFC 8414 metadata
 * both read this table, so the published document cannot drift from what is served.
 */
export const PATHS = {
  metadata: '/.well-known/oauth-authorization-server',
  authorization: '/oauth2/code',
  token: '/oauth2/token',
  revocation: '/oauth2/revoke',
  introspection: '/oauth2/introspect',
  authorizations: '/oauth2/authorizations',
} as const;

/** The endpoints a client calls with its credentials: rate-limited per client id, answered in JSON. */
export const CLIENT_ENDPOINTS: readonly string[] = [PATHS.token, PATHS.revocation, PATHS.introspection];

/** RFC 6749 §2.3.1: Basic (form-url-decoded) or client_id and client_secret in the form body. */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];

/** Public clients (PRODUCT §13) authenticate by client_id alone at the token and revocation endpoints. */
export const PUBLIC_CLIENT_AUTH_METHODS = [...CLIENT_AUTH_METHODS, 'none'];

/** The only scope (PRODUCT §2): the client's registered permission set. */
export const SCOPES = ['default'];
