import { CLIENT_AUTH_METHODS, PATHS, PUBLIC_CLIENT_AUTH_METHODS } from '../../auth/endpoints.js';

/**
 * The routes outside `/:collection[/:item][/:action]`: the authorization server (spec §5,
 * PRODUCT §2) and signed file downloads. They have no field declarations to generate from, so
 * they are described here, next to the generated part, in the same document.
 */
type Json = Record<string, unknown>;

const TOKEN_ERRORS = [
  'invalid_request',
  'server_error',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'temporarily_unavailable',
];

export const OAUTH_SCHEMAS: Record<string, Json> = {
  TokenResponse: {
    type: 'object',
    properties: {
      access_token: { type: 'string' },
      token_type: { const: 'Bearer' },
      expires_in: { type: 'integer', const: 3600 },
      refresh_token: {
        type: 'string',
        description:
          'Only when requested (access_type=offline) and the owner did not force re-authentication; never on a refresh grant',
      },
    },
    required: ['access_token', 'token_type', 'expires_in'],
  },
  IntrospectionResponse: {
    type: 'object',
    description:
      'RFC 7662 §2.2. Only `{"active": false}` for an unknown, expired or revoked token, or one issued to another client',
    properties: {
      active: { type: 'boolean' },
      scope: { const: 'default' },
      client_id: { type: 'string' },
      username: { type: 'string', description: "The owner's login" },
      sub: { type: 'string', description: "The owner's user id" },
      exp: { type: 'integer', description: 'Expiry, Unix seconds' },
      iat: { type: 'integer', description: 'Issued at, Unix seconds' },
      token_type: { enum: ['Bearer', 'refresh_token'] },
      permissions: { type: 'array', items: { type: 'string' }, description: 'The permissions granted to the token' },
    },
    required: ['active'],
  },
  AuthorizationServerMetadata: {
    type: 'object',
    description: 'RFC 8414 §2; every URL is absolute, under the issuer (`PUBLIC_URL`)',
    properties: {
      issuer: { type: 'string', format: 'uri' },
      authorization_endpoint: { type: 'string', format: 'uri' },
      token_endpoint: { type: 'string', format: 'uri' },
      revocation_endpoint: { type: 'string', format: 'uri' },
      introspection_endpoint: { type: 'string', format: 'uri' },
      scopes_supported: { type: 'array', items: { const: 'default' } },
      response_types_supported: { type: 'array', items: { const: 'code' } },
      response_modes_supported: { type: 'array', items: { const: 'query' } },
      grant_types_supported: { type: 'array', items: { enum: ['authorization_code', 'refresh_token'] } },
      token_endpoint_auth_methods_supported: { type: 'array', items: { enum: PUBLIC_CLIENT_AUTH_METHODS } },
      revocation_endpoint_auth_methods_supported: { type: 'array', items: { enum: PUBLIC_CLIENT_AUTH_METHODS } },
      introspection_endpoint_auth_methods_supported: { type: 'array', items: { enum: CLIENT_AUTH_METHODS } },
      code_challenge_methods_supported: { type: 'array', items: { const: 'S256' } },
      authorization_response_iss_parameter_supported: { const: true },
      service_documentation: { type: 'string', format: 'uri' },
    },
    required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'response_types_supported'],
  },
  OAuthError: {
    type: 'object',
    description: 'RFC 6749 §5.2',
    properties: { error: { enum: TOKEN_ERRORS }, error_description: { type: 'string' } },
    required: ['error'],
  },
};

const q = (name: string, required: boolean, schema: Json, description: string) => ({
  name,
  in: 'query',
  required,
  schema,
  description,
});
const form = (properties: Json, required: string[]) => ({ type: 'object', properties, required });
const json = (schema: Json) => ({ 'application/json': { schema } });
const html = { 'text/html': { schema: { type: 'string' } } };
const clientCredentials = { client_id: { type: 'string' }, client_secret: { type: 'string' } };
const tokenForm = (extra: Json) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': {
      schema: form(
        {
          token: { type: 'string' },
          token_type_hint: {
            enum: ['access_token', 'refresh_token'],
            description: 'A hint only: both kinds are searched whatever it says',
          },
          ...clientCredentials,
          ...extra,
        },
        ['token'],
      ),
    },
  },
});
/** The error answers every client endpoint shares (RFC 6749 §5.2), and RATE_LIMIT_AUTH (per client id) in the envelope. */
const clientErrors = {
  400: {
    description: 'RFC 6749 error (`invalid_request`, `unauthorized_client` for an uncertified client)',
    content: json({ $ref: '#/components/schemas/OAuthError' }),
  },
  401: {
    description: 'Client authentication failed (`invalid_client`, with `WWW-Authenticate: Basic`)',
    content: json({ $ref: '#/components/schemas/OAuthError' }),
  },
  429: { $ref: '#/components/responses/E429' },
  503: {
    description: 'The database is unavailable: `temporarily_unavailable`, with `Retry-After`',
    headers: { 'Retry-After': { required: true, schema: { type: 'string' } } },
    content: json({ $ref: '#/components/schemas/OAuthError' }),
  },
};
/** A page while the database is unavailable. */
const pageUnavailable = {
  503: {
    description: 'The database is unavailable: an HTML page with `Retry-After`',
    headers: { 'Retry-After': { required: true, schema: { type: 'string' } } },
    content: html,
  },
};

export function oauthPaths(): Record<string, Json> {
  return {
    [PATHS.authorization]: {
      get: {
        tags: ['oauth2'],
        operationId: 'authorize',
        summary: 'Start the authorization code flow (browser): login, then consent',
        security: [],
        parameters: [
          q('response_type', true, { const: 'code' }, 'Must be `code`'),
          q('client_id', true, { type: 'string' }, 'The client ID'),
          q('scope', true, { const: 'default' }, "Must be `default`: the client's registered permission set"),
          q('state', false, { type: 'string' }, 'Returned unchanged (sanitised) with the code'),
          q(
            'redirect_uri',
            false,
            { type: 'string', format: 'uri' },
            'Exact match of a registered URI; required when the client has several',
          ),
          q('code_challenge', false, { type: 'string' }, 'PKCE challenge (S256)'),
          q('code_challenge_method', false, { const: 'S256' }, 'PKCE method'),
          q('access_type', false, { const: 'offline' }, 'Ask for a refresh token'),
          q(
            'prompt',
            false,
            { enum: ['login', 'consent', 'none'] },
            '`login` asks for the password again; `none` answers `login_required` or `consent_required`',
          ),
        ],
        responses: {
          200: { description: 'The login form, or the consent form for an owner already signed in', content: html },
          302: {
            description:
              'Back to the redirect URI with `code` (and `state`), or with `error` (`unauthorized_client` for an uncertified client, before any page); always with `iss` (RFC 9207)',
          },
          400: { description: 'An error page: unknown client or bad `redirect_uri` (never a redirect)', content: html },
          429: {
            description: 'RATE_LIMIT_AUTH, counted per client address: an HTML page with `Retry-After`',
            content: html,
          },
          ...pageUnavailable,
        },
      },
    },
    [PATHS.token]: {
      post: {
        tags: ['oauth2'],
        operationId: 'token',
        summary: 'Exchange an authorization code or a refresh token for an access token',
        description:
          'Client credentials in the body (`client_id`, `client_secret`) or in `Authorization: Basic`. Uncertified clients get `unauthorized_client`.',
        security: [{}, { clientBasic: [] }],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                oneOf: [
                  form(
                    {
                      grant_type: { const: 'authorization_code' },
                      code: { type: 'string' },
                      redirect_uri: { type: 'string' },
                      code_verifier: { type: 'string' },
                      client_id: { type: 'string' },
                      client_secret: { type: 'string' },
                    },
                    ['grant_type', 'code'],
                  ),
                  form(
                    {
                      grant_type: { const: 'refresh_token' },
                      refresh_token: { type: 'string' },
                      client_id: { type: 'string' },
                      client_secret: { type: 'string' },
                    },
                    ['grant_type', 'refresh_token'],
                  ),
                ],
              },
            },
          },
        },
        responses: {
          200: {
            description: 'Tokens (with `Cache-Control: no-store`)',
            content: json({ $ref: '#/components/schemas/TokenResponse' }),
          },
          400: { description: 'RFC 6749 error', content: json({ $ref: '#/components/schemas/OAuthError' }) },
          401: {
            description: 'Failed `Authorization: Basic` (with `WWW-Authenticate: Basic`)',
            headers: {
              'WWW-Authenticate': {
                required: true,
                schema: { type: 'string' },
                description: '`Basic realm="oauth2", charset="UTF-8"`',
              },
            },
            content: json({ $ref: '#/components/schemas/OAuthError' }),
          },
          429: clientErrors[429],
          500: { description: '`server_error`', content: json({ $ref: '#/components/schemas/OAuthError' }) },
          503: clientErrors[503],
        },
      },
    },
    [PATHS.revocation]: {
      post: {
        tags: ['oauth2'],
        operationId: 'revokeToken',
        summary: 'Revoke an access or refresh token (RFC 7009)',
        description:
          "Client-authenticated as at the token endpoint. 200 whether or not the token existed; another client's token is left alone. Revoking a refresh token also revokes the access tokens of its grant.",
        security: [{}, { clientBasic: [] }],
        requestBody: tokenForm({}),
        responses: {
          200: { description: 'Done (or nothing to do)', content: json({ type: 'object' }) },
          ...clientErrors,
        },
      },
    },
    [PATHS.introspection]: {
      post: {
        tags: ['oauth2'],
        operationId: 'introspectToken',
        summary: 'Describe a token of this client (RFC 7662)',
        security: [{}, { clientBasic: [] }],
        requestBody: tokenForm({}),
        responses: {
          200: {
            description: "The token's state",
            content: json({ $ref: '#/components/schemas/IntrospectionResponse' }),
          },
          ...clientErrors,
        },
      },
    },
    [PATHS.authorizations]: {
      get: {
        tags: ['oauth2'],
        operationId: 'connectedApplications',
        summary: "Connected applications (browser): the signed-in owner's clients holding live tokens",
        description:
          'Shows the login form first when there is no session (it comes back here). Per client: name, permissions, since when, and a revoke form.',
        security: [],
        responses: {
          200: { description: 'The page (or the login form)', content: html },
          429: { description: 'RATE_LIMIT_AUTH per client address: an HTML page', content: html },
          ...pageUnavailable,
        },
      },
      post: {
        tags: ['oauth2'],
        operationId: 'revokeConnection',
        summary: 'End every access and refresh token of one client for the signed-in owner',
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: form({ csrf: { type: 'string' }, revoke: { type: 'string', description: 'The client id' } }, [
                'csrf',
                'revoke',
              ]),
            },
          },
        },
        responses: {
          303: { description: 'Back to the page' },
          403: { description: 'CSRF token missing or wrong: the page again, nothing revoked', content: html },
          ...pageUnavailable,
        },
      },
    },
    [PATHS.metadata]: {
      get: {
        tags: ['oauth2'],
        operationId: 'authorizationServerMetadata',
        summary: 'Authorization server metadata (RFC 8414): every endpoint and what it supports',
        security: [],
        responses: {
          200: {
            description: 'The metadata',
            content: json({ $ref: '#/components/schemas/AuthorizationServerMetadata' }),
          },
        },
      },
    },
  };
}
