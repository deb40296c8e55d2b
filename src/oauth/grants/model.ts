import OAuth2Server from '@node-oauth/oauth2-server';
import type { Database } from '../../db/index.js';
import { withTransaction } from '../../db/tx.js';
import { secretKey } from '../../auth/secrets.js';
import { authenticatedClient } from '../steps/authenticate-client.js';
import type { OAuthClient } from './clients.js';
import { ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_IDLE_S, issueToken, revokeTokens } from '../../auth/tokens.js';
import {
  codeByHash,
  endRotated,
  markReplayed,
  refreshByHash,
  revokeToken,
  slideRefresh,
  tokenRevoked,
  useCode,
  wasReplayed,
} from './repository.js';

const { InvalidGrantError } = OAuth2Server;

export const GRANTS = ['authorization_code', 'refresh_token'];

export interface ModelClient {
  id: string;
  grants: string[];
  redirectUris: string[];
  /** A public client (PRODUCT §13): its refresh tokens rotate. */
  public?: boolean;
}
export interface ModelUser {
  id: number;
  accountId: number;
}

/** A client as the library's grant handlers see it. */
export const modelClient = (client: OAuthClient): ModelClient => ({
  id: client.clientId,
  grants: GRANTS,
  redirectUris: client.redirectUris,
  public: client.public,
});

/** What the grant handlers (grants.ts) ask the model to store. */
export interface TokenSpec {
  scope: string[];
  codeId: number | null;
  offline: boolean;
  refreshId?: number;
  /** Rotation (public clients): the refresh token `refreshId` is ended and replaced by a new one. */
  rotate?: boolean;
}

/** The refresh token to rotate was already ended: by rotation (reuse) or by revocation. */
class AlreadyEnded extends Error {}

/**
 * The library compares expiry with its own Date.now(); we decide expiry with the app clock and
 * hand it a date at the same distance from real time, so both agree and tests can move time.
 */
const libraryDate = (expiresAt: number, now: number) => new Date(Date.now() + (expiresAt - now));

/** The @node-oauth/oauth2-server model, backed by our tables. Stores only hashes. */
export function createModel(database: Database, clock: () => number) {
  const db = database.db;

  /** A replay marks the code first, then revokes what it issued (see saveToken for why). */
  async function onReplay(accountId: number, codeId: number): Promise<void> {
    await markReplayed(db, accountId, codeId, clock());
    await revokeTokens(db, { accountId, codeId });
  }

  /**
   * Ends every token of a grant (RFC 9700 §4.14.2): all tokens issued from its code, or, for a
   * token issued without one, the refresh token and what was issued from it.
   */
  async function revokeGrant(accountId: number, codeId: number | null, refreshId: number): Promise<void> {
    await revokeTokens(db, codeId !== null ? { accountId, codeId } : { accountId, refreshId });
  }

  return {
    /**
     * A confidential client always needs its secret (spec §5.1), even on a PKCE request, which the
     * library would let skip it; a public client (PRODUCT §13) is named by client_id alone and
     * refused when it sends a secret. The same decision as every client endpoint's.
     */
    async getClient(clientId: string, clientSecret?: string): Promise<ModelClient | null> {
      return modelClient(await authenticatedClient(db, { clientId, clientSecret }));
    },

    async getAuthorizationCode(code: string) {
      const key = secretKey(code);
      const row = await codeByHash(db, key.hash, key.accountId);
      if (!row) return null;
      if (row.used_at !== null) {
        await onReplay(row.account_id, row.id);
        return null;
      }
      const now = clock();
      if (row.expires_at <= now) throw new InvalidGrantError('Invalid grant: authorization code has expired');
      return {
        id: row.id,
        authorizationCode: code,
        expiresAt: libraryDate(row.expires_at, now),
        redirectUri: row.redirect_uri ?? undefined,
        scope: JSON.parse(row.permissions) as string[],
        client: { id: row.client_id, redirectUris: JSON.parse(row.redirect_uris) as string[] },
        user: { id: row.user_id, accountId: row.account_id },
        codeChallenge: row.code_challenge ?? undefined,
        codeChallengeMethod: row.code_challenge_method ?? undefined,
        offline: row.offline === 1,
      };
    },

    /** Single use, atomically: of two concurrent redemptions only one updates the row. */
    async revokeAuthorizationCode(code: { id: number; user: ModelUser }): Promise<boolean> {
      if (await useCode(db, code.user.accountId, code.id, clock())) return true;
      await onReplay(code.user.accountId, code.id);
      return false;
    },

    async getRefreshToken(token: string) {
      const key = secretKey(token);
      const row = await refreshByHash(db, key);
      if (!row) return null;
      if (row.replaced_at !== null) {
        // RFC 9700 §4.14.2: one of the two holders of this token is an attacker; end the grant.
        await revokeGrant(row.account_id, row.code_id, row.id);
        throw new InvalidGrantError('Invalid grant: refresh token was already used; its grant is revoked');
      }
      const now = clock();
      if (row.expires_at <= now) throw new InvalidGrantError('Invalid grant: refresh token has expired');
      return {
        id: row.id,
        refreshToken: token,
        refreshTokenExpiresAt: libraryDate(row.expires_at, now),
        scope: JSON.parse(row.permissions) as string[],
        client: { id: row.client_id },
        user: { id: row.user_id, accountId: row.account_id },
        codeId: row.code_id,
      };
    },

    /** Required by the library; never called: rotation (public clients) happens in saveToken. */
    async revokeToken(): Promise<boolean> {
      return true;
    },

    async saveToken(spec: TokenSpec, client: ModelClient, user: ModelUser) {
      const now = clock();
      const grant = {
        clientId: client.id,
        userId: user.id,
        accountId: user.accountId,
        permissions: spec.scope,
        codeId: spec.codeId,
      };
      const rotated = spec.rotate === true && spec.refreshId !== undefined ? spec.refreshId : undefined;
      const issue = () =>
        withTransaction(database, async (trx) => {
          if (rotated !== undefined) {
            // Rotation: the old refresh token ends in the same transaction that makes the new one,
            // and only if no one ended it first. Of two requests (in any processes) presenting it
            // at once, one updates the row; the other, on PostgreSQL after waiting for the first's
            // row lock, updates nothing and is treated as reuse.
            if (!(await endRotated(trx, user.accountId, rotated, now))) throw new AlreadyEnded();
            const refresh = await issueToken(trx, 'refresh', { ...grant, refreshId: rotated }, now);
            const access = await issueToken(trx, 'access', { ...grant, refreshId: refresh.id }, now);
            return { access, refresh };
          }
          const access = await issueToken(trx, 'access', { ...grant, refreshId: spec.refreshId ?? null }, now);
          const refresh = spec.offline ? await issueToken(trx, 'refresh', grant, now) : undefined;
          // Refresh tokens expire after 60 days without use: each use slides the window.
          if (spec.refreshId !== undefined)
            await slideRefresh(trx, user.accountId, spec.refreshId, now + REFRESH_TOKEN_IDLE_S * 1000);
          return { access, refresh };
        });
      let issued: Awaited<ReturnType<typeof issue>>;
      try {
        issued = await issue();
      } catch (err) {
        if (!(err instanceof AlreadyEnded)) throw err;
        // Ended meanwhile by another request's rotation (reuse) or a revocation: end the grant.
        await revokeGrant(user.accountId, spec.codeId, rotated!);
        throw new InvalidGrantError('Invalid grant: refresh token was already used; its grant is revoked');
      }
      const { access, refresh } = issued;
      // A concurrent replay may have revoked by code_id before these rows were visible to it. It
      // marks the code before revoking, so checking the mark after inserting closes that gap. The
      // redemption still won (200, as if the replay came later), but what it got is revoked.
      if (spec.codeId !== null && (await wasReplayed(db, user.accountId, spec.codeId)))
        await revokeTokens(db, { accountId: user.accountId, codeId: spec.codeId });
      // Likewise a refresh token revoked (RFC 7009, connected applications) while this grant ran:
      // the revocation may not have seen the new access token, so it is revoked here. (A rotated
      // token was ended by this grant itself; its revocation by code_id covers the new tokens.)
      if (
        spec.refreshId !== undefined &&
        rotated === undefined &&
        (await tokenRevoked(db, user.accountId, spec.refreshId))
      )
        await revokeToken(db, user.accountId, access.id);
      return {
        accessToken: access.token,
        accessTokenExpiresAt: libraryDate(access.expiresAt, now),
        refreshToken: refresh?.token,
        expiresIn: ACCESS_TOKEN_TTL_S,
        client,
        user,
      };
    },
  };
}

export type Model = ReturnType<typeof createModel>;
