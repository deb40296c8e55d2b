import * as oauth from 'oauth4webapi';
import { AuthorizationRevokedError } from './errors.js';

/** What a signed-in client holds; save it (`onTokens`) to resume without signing in again. */
export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires, in milliseconds since the epoch. */
  expiresAt: number;
}

export interface SessionOptions {
  /** The server's public origin (its OAuth issuer): every OAuth endpoint comes from its metadata. */
  issuer: string | URL;
  clientId: string;
  clientSecret: string;
  /** One of the client's registered redirect URIs. */
  redirectUri: string;
  tokens?: Tokens;
  /**
   * Called with the new tokens after sign-in and every refresh, and with undefined once they are
   * dead: after `revoke()`, and when a refresh is refused (`AuthorizationRevokedError`).
   */
  onTokens?: (tokens: Tokens | undefined) => void | Promise<void>;
  /** The clock (milliseconds), for tokens' expiry. */
  now?: () => number;
}

/** Refresh this long before the access token expires, so a call never leaves with a dying token. */
const EXPIRY_MARGIN_MS = 30_000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The OAuth side: discovery, the code flow with PKCE, state and `iss`, refresh and revocation. */
export class Session {
  private tokens: Tokens | undefined;
  private refreshing: Promise<string> | undefined;
  private readonly client: oauth.Client;
  private readonly auth: oauth.ClientAuth;
  private readonly http: { [oauth.allowInsecureRequests]?: boolean };
  private readonly now: () => number;

  private constructor(
    readonly as: oauth.AuthorizationServer,
    private readonly opts: SessionOptions,
  ) {
    this.client = { client_id: opts.clientId };
    this.auth = oauth.ClientSecretBasic(opts.clientSecret);
    this.tokens = opts.tokens;
    this.now = opts.now ?? Date.now;
    this.http = insecureFor(new URL(as.issuer));
  }

  /** Reads the server's metadata (RFC 8414). */
  static async discover(opts: SessionOptions): Promise<Session> {
    const issuer = new URL(opts.issuer);
    const res = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecureFor(issuer) });
    return new Session(await oauth.processDiscoveryResponse(issuer, res), opts);
  }

  /** Where to send the user, and what to keep until the callback (in the user's session). */
  async authorizationUrl(opts: { accessType?: 'offline' | 'online'; prompt?: 'login' | 'none' } = {}) {
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const url = new URL(this.as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.opts.clientId,
      redirect_uri: this.opts.redirectUri,
      scope: 'default',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      access_type: opts.accessType ?? 'offline',
      ...(opts.prompt ? { prompt: opts.prompt } : {}),
    }).toString();
    return { url, state, codeVerifier };
  }

  /**
   * The callback: checks `state` and `iss` (RFC 9207; a mix-up is refused), then exchanges the
   * code with its PKCE verifier. An error redirect (`access_denied`, …) throws
   * `oauth.AuthorizationResponseError`.
   */
  async signIn(callback: URL | string, expected: { state: string; codeVerifier: string }): Promise<Tokens> {
    const params = oauth.validateAuthResponse(this.as, this.client, new URL(callback), expected.state);
    const res = await oauth.authorizationCodeGrantRequest(
      this.as,
      this.client,
      this.auth,
      params,
      this.opts.redirectUri,
      expected.codeVerifier,
      this.http,
    );
    return this.keep(await oauth.processAuthorizationCodeResponse(this.as, this.client, res));
  }

  /** The current access token, refreshed first when it is about to expire. */
  async accessToken(): Promise<string> {
    const t = this.tokens;
    if (!t) throw new Error('not signed in: call signIn() first, or pass saved tokens');
    if (t.refreshToken && this.now() >= t.expiresAt - EXPIRY_MARGIN_MS) return this.refresh(t.accessToken);
    return t.accessToken;
  }

  /**
   * Exchanges the refresh token for a new access token (the server keeps the refresh token).
   * `stale`: only if the current access token is still this one (others already refreshed it).
   */
  async refresh(stale?: string): Promise<string> {
    const t = this.tokens;
    if (!t?.refreshToken) throw new Error('no refresh token: sign in with accessType "offline"');
    if (stale !== undefined && t.accessToken !== stale) return t.accessToken;
    this.refreshing ??= (async () => {
      try {
        const res = await oauth.refreshTokenGrantRequest(this.as, this.client, this.auth, t.refreshToken!, this.http);
        let answer: oauth.TokenEndpointResponse;
        try {
          answer = await oauth.processRefreshTokenResponse(this.as, this.client, res);
        } catch (err) {
          if (!(err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant')) throw err;
          // The grant is gone for good: the dead tokens are dropped here and by the caller's store.
          if (this.tokens === t) this.tokens = undefined;
          await this.opts.onTokens?.(undefined);
          throw new AuthorizationRevokedError(
            `the refresh token was refused (invalid_grant${err.error_description ? `: ${err.error_description}` : ''}): sign in again`,
            { cause: err },
          );
        }
        return (await this.keep(answer, t.refreshToken)).accessToken;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Whether a 401 may be cured by refreshing. */
  canRefresh(): boolean {
    return Boolean(this.tokens?.refreshToken);
  }

  /** Ends the grant (RFC 7009): revoking the refresh token revokes its access tokens too. */
  async revoke(): Promise<void> {
    const t = this.tokens;
    if (!t) return;
    const [token, hint] = t.refreshToken ? [t.refreshToken, 'refresh_token'] : [t.accessToken, 'access_token'];
    const res = await oauth.revocationRequest(this.as, this.client, this.auth, token, {
      additionalParameters: { token_type_hint: hint },
      ...this.http,
    });
    await oauth.processRevocationResponse(res);
    this.tokens = undefined;
    await this.opts.onTokens?.(undefined);
  }

  get current(): Tokens | undefined {
    return this.tokens;
  }

  private async keep(r: oauth.TokenEndpointResponse, refreshToken?: string): Promise<Tokens> {
    this.tokens = {
      accessToken: r.access_token,
      refreshToken: r.refresh_token ?? refreshToken,
      expiresAt: this.now() + (r.expires_in ?? 3600) * 1000,
    };
    await this.opts.onTokens?.(this.tokens);
    return this.tokens;
  }
}

/** Plain http is allowed for a server on this machine only (development, tests). */
function insecureFor(url: URL) {
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname) ? { [oauth.allowInsecureRequests]: true } : {};
}
