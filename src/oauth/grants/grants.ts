import OAuth2Server, { type Client, type Request } from '@node-oauth/oauth2-server';
import AuthorizationCodeGrantType from '@node-oauth/oauth2-server/lib/grant-types/authorization-code-grant-type.js';
import RefreshTokenGrantType from '@node-oauth/oauth2-server/lib/grant-types/refresh-token-grant-type.js';
import type { TokenSpec } from './model.js';

const { InvalidGrantError, InvalidScopeError } = OAuth2Server;

/**
 * The library's authorization_code grant, reusing its lookup, client, expiry and PKCE checks.
 * Overridden: redirect_uri (the library skips the check when the authorization request had none,
 * and reads the query string), and what is stored (the code's offline flag and id, so a replay
 * can revoke everything issued from it).
 */
export class CodeGrant extends AuthorizationCodeGrantType {
  override async handle(request: Request, client: Client) {
    const code = await this.getAuthorizationCode(request, client);
    await this.revokeAuthorizationCode(code);
    // After revoking, as the library does: a failed verifier consumes the code (no brute force).
    this.verifyPKCE(request, code);
    checkRedirectUri(request.body.redirect_uri, code.redirectUri, code.client.redirectUris);
    const spec: TokenSpec = { scope: code.scope, codeId: code.id, offline: code.offline };
    return this.model.saveToken(spec, client, code.user);
  }
}

/**
 * RFC 6749 §4.1.3: identical to the authorization request's redirect_uri when it sent one. When it
 * did not (one registered URI), the token request may omit it or send exactly that URI.
 */
function checkRedirectUri(sent: string | undefined, inAuthorization: string | undefined, registered: string[]): void {
  const ok =
    inAuthorization !== undefined
      ? sent === inAuthorization
      : sent === undefined || (registered.length === 1 && sent === registered[0]);
  if (!ok) throw new InvalidGrantError('Invalid grant: `redirect_uri` does not match the authorization request');
}

/**
 * The library's refresh_token grant (lookup, client and expiry checks). For a confidential client
 * without rotation: a refresh returns a new access token only (spec §5.3), with the permissions of
 * the refresh token. A public client's refresh token rotates (PRODUCT §13): a new refresh token
 * comes with the access token and the old one ends.
 */
export class RefreshGrant extends RefreshTokenGrantType {
  override async handle(request: Request, client: Client) {
    const token = await this.getRefreshToken(request, client);
    const scope = request.body.scope as string | undefined;
    if (scope !== undefined && scope !== 'default')
      throw new InvalidScopeError('Invalid scope: only `default` is supported');
    const rotate = (client as { public?: boolean }).public === true;
    const spec: TokenSpec = { scope: token.scope, codeId: token.codeId, offline: rotate, refreshId: token.id, rotate };
    return this.model.saveToken(spec, client, token.user);
  }
}
