import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { sendJson } from '../../http/envelope.js';
import { CLIENT_AUTH_METHODS, PATHS, PUBLIC_CLIENT_AUTH_METHODS, SCOPES } from '../../auth/endpoints.js';
import { GRANTS } from '../grants/model.js';

/**
 * RFC 8414 authorization server metadata, from the configuration the endpoints run on: the issuer
 * is the public origin, which is also the `iss` of every authorization response (RFC 9207).
 */
export function authorizationServerMetadata(config: Pick<Config, 'publicUrl'>) {
  const at = (path: string) => `${config.publicUrl}${path}`;
  return {
    issuer: config.publicUrl,
    authorization_endpoint: at(PATHS.authorization),
    token_endpoint: at(PATHS.token),
    revocation_endpoint: at(PATHS.revocation),
    introspection_endpoint: at(PATHS.introspection),
    scopes_supported: SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: GRANTS,
    // `none`: public clients (PRODUCT §13) name themselves by client_id alone; they cannot introspect.
    token_endpoint_auth_methods_supported: PUBLIC_CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: PUBLIC_CLIENT_AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: at('/docs'),
  };
}

/** Public, no token; like every JSON answer it carries the four headers of spec §1.7 (no-store). */
export async function metadataEndpoint(app: FastifyInstance): Promise<void> {
  app.get(PATHS.metadata, async (_request, reply) => sendJson(reply, 200, authorizationServerMetadata(app.config)));
}
