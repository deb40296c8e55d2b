import OAuth2Server from '@node-oauth/oauth2-server';

const { InvalidRequestError } = OAuth2Server;

/**
 * The `token` of a revocation (RFC 7009 §2.1) or introspection (RFC 7662 §2.1) request. The
 * `token_type_hint` is only a hint: we look a token up by its hash whatever its kind, so any hint,
 * even an unknown one, is accepted and the search always covers both kinds.
 */
export function tokenParam(params: Record<string, string>): string {
  const token = params.token;
  if (token === undefined || token === '') throw new InvalidRequestError('Missing parameter: `token`');
  return token;
}
