
/**
 * The routes outside `/:collection[/:item][/:action]`: the authorization server (spec §5,
 * PRODUCT §2) and signed file downloads. They have no field declarations to generate from, so
 * they are described here, next to the generated part, in the same document.
 */
type Json = Record<string, unknown>;

const TOKEN_ERRORS = ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'];

export const OAUTH_SCHEMAS: Record<string, Json> = {
  TokenResponse: {
    type: 'object',
    properties: {
      access_token: { type: 'string' },
      token_type: { const: 'Bearer' },
      expires_in: { type: 'integer', const: 3600 },
      refresh_token: { type: 'string', description: 'Only when requested (access_type=offline) and the owner did not force re-authentication; never on a refresh grant' },
    },
    required: ['access_token', 'token_type', 'expires_in'],
  },
  OAuthError: {
    type: 'object',
    description: 'RFC 6749 §5.2',
    properties: { error: { enum: TOKEN_ERRORS }, error_description: { type: 'string' } },
    required: ['error'],
  },
};

const q = (name: string, required: boolean, schema: Json, description: string) => ({ name, in: 'query', required, schema, description });
const form = (properties: Json, required: string[]) => ({ type: 'object', properties, required });
const json = (schema: Json) => ({ 'application/json': { schema } });

export function oauthPaths(): Record<string, Json> {
  return {
    '/oauth2/code': {
      get: {
        tags: ['oauth2'],
        operationId: 'authorize',
        summary: 'Start the authorization code flow (browser): login, then consent',
        security: [],
        parameters: [
          q('response_type', true, { const: 'code' }, 'Must be `code`'),
          q('client_id', true, { type: 'string' }, 'The client ID'),
          q('scope', true, { const: 'default' }, 'Must be `default`: the client\'s registered permission set'),
          q('state', false, { type: 'string' }, 'Returned unchanged (sanitised) with the code'),
          q('redirect_uri', false, { type: 'string', format: 'uri' }, 'Exact match of a registered URI; required when the client has several'),
          q('code_challenge', false, { type: 'string' }, 'PKCE challenge (S256)'),
          q('code_challenge_method', false, { const: 'S256' }, 'PKCE method'),
          q('access_type', false, { const: 'offline' }, 'Ask for a refresh token'),
        ],
        responses: {
          200: { description: 'The login form, or the consent form for an owner already signed in', content: { 'text/html': { schema: { type: 'string' } } } },
          302: { description: 'Back to the redirect URI with `code` (and `state`), or with `error`' },
          400: { description: 'An error page: unknown client or bad `redirect_uri` (never a redirect)', content: { 'text/html': { schema: { type: 'string' } } } },
        },
      },
    },
    '/oauth2/token': {
      post: {
        tags: ['oauth2'],
        operationId: 'token',
        summary: 'Exchange an authorization code or a refresh token for an access token',
        description: 'Client credentials in the body (`client_id`, `client_secret`) or in `Authorization: Basic`. Uncertified clients get `unauthorized_client`.',
        security: [{}, { clientBasic: [] }],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                oneOf: [
                  form({ grant_type: { const: 'authorization_code' }, code: { type: 'string' }, redirect_uri: { type: 'string' }, code_verifier: { type: 'string' }, client_id: { type: 'string' }, client_secret: { type: 'string' } }, ['grant_type', 'code']),
                  form({ grant_type: { const: 'refresh_token' }, refresh_token: { type: 'string' }, client_id: { type: 'string' }, client_secret: { type: 'string' } }, ['grant_type', 'refresh_token']),
                ],
              },
            },
          },
        },
        responses: {
          200: { description: 'Tokens (with `Cache-Control: no-store`)', content: json({ $ref: '#/components/schemas/TokenResponse' }) },
          400: { description: 'RFC 6749 error', content: json({ $ref: '#/components/schemas/OAuthError' }) },
          401: { description: 'Failed `Authorization: Basic` (with `WWW-Authenticate: Basic`)', content: json({ $ref: '#/components/schemas/OAuthError' }) },
        },
      },
    },
  };
}
