import OAuth2Server from '@node-oauth/oauth2-server';
import type { FastifyRequest } from 'fastify';

const { InvalidRequestError } = OAuth2Server;

/**
 * The form of a client endpoint (token, revocation, introspection), with the checks the library
 * does not make: a form body, no parameter repeated (RFC 6749 §3.2) and none in the URI, where
 * credentials, codes and tokens would end up in logs (§2.3.1, RFC 7009 §2.1, RFC 7662 §2.1).
 */
export function formParams(request: FastifyRequest): Record<string, string> {
  if (request.body === undefined || request.body === null) {
    throw new InvalidRequestError('Invalid request: content must be application/x-www-form-urlencoded');
  }
  if (Object.keys(request.query as object).length > 0) {
    throw new InvalidRequestError('Invalid request: parameters must be sent in the request body, not the URI');
  }
  const body = request.body as Record<string, string | string[]>;
  const repeated = Object.keys(body).find((k) => Array.isArray(body[k]));
  if (repeated !== undefined)
    throw new InvalidRequestError(`Invalid request: parameter \`${repeated.slice(0, 40)}\` is repeated`);
  return body as Record<string, string>;
}
