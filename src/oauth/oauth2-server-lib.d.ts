// The library exports AbstractGrantType only; we extend its concrete grant types to close gaps
// (see grants.ts), so their deep paths need declarations of the members we use.
declare module '@node-oauth/oauth2-server/lib/grant-types/authorization-code-grant-type.js' {
  import { AbstractGrantType, type Request, type Client, type Token } from '@node-oauth/oauth2-server';
  export default class AuthorizationCodeGrantType extends AbstractGrantType {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    model: any;
    getAuthorizationCode(request: Request, client: Client): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    revokeAuthorizationCode(code: unknown): Promise<unknown>;
    verifyPKCE(request: Request, code: unknown): void;
    handle(request: Request, client: Client): Promise<Token>;
  }
}

declare module '@node-oauth/oauth2-server/lib/grant-types/refresh-token-grant-type.js' {
  import { AbstractGrantType, type Request, type Client, type Token } from '@node-oauth/oauth2-server';
  export default class RefreshTokenGrantType extends AbstractGrantType {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    model: any;
    getRefreshToken(request: Request, client: Client): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    handle(request: Request, client: Client): Promise<Token>;
  }
}
