import OAuth2Server from '@node-oauth/oauth2-server';
import type { Database } from '../db/index.js';
import { withTransaction } from '../db/tx.js';
import { secretKey } from '../auth/secrets.js';
import { authenticateClient } from './clients.js';
import { ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_IDLE_S, issueToken, revokeTokens } from '../auth/tokens.js';

const { InvalidGrantError, UnauthorizedClientError } = OAuth2Server;

export const GRANTS = ['authorization_code', 'refresh_token'];

export interface ModelClient {
  id: string;
  grants: string[];
  redirectUris: string[];
}
export interface ModelUser {
  id: number;
  accountId: number;
}

/** What the grant handlers (grants.ts) ask the model to store. */
export interface TokenSpec {
  scope: string[];
  codeId: number | null;
  offline: boolean;
  refreshId?: number;
}

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
    await db
      .updateTable('oauth_codes')
      .set({ replayed_at: clock() })
      .where('account_id', '=', accountId)
      .where('id', '=', codeId)
      .execute();
    await revokeTokens(db, { accountId, codeId });
  }

  return {
    /**
     * A secret is always required: the library lets a PKCE request skip it, but our clients are
     * confidential (spec §5.1), so a missing secret is an unknown client.
     */
    async getClient(clientId: string, clientSecret?: string): Promise<ModelClient | null> {
      if (!clientSecret) return null;
      const client = await authenticateClient(db, clientId, clientSecret);
      if (!client || client.revoked) return null;
      if (!client.certified) throw new UnauthorizedClientError('the client is not certified by the service operator');
      return { id: client.clientId, grants: GRANTS, redirectUris: client.redirectUris };
    },

    async getAuthorizationCode(code: string) {
      const key = secretKey(code);
      const row = await db
        .selectFrom('oauth_codes as k')
        .innerJoin('oauth_clients as c', 'c.client_id', 'k.client_id')
        .select([
          'k.id',
          'k.client_id',
          'k.user_id',
          'k.account_id',
          'k.permissions',
          'k.redirect_uri',
          'k.code_challenge',
          'k.code_challenge_method',
          'k.offline',
          'k.expires_at',
          'k.used_at',
          'c.redirect_uris',
        ])
        .where('k.code_hash', '=', key.hash)
        .$if(key.accountId !== undefined, (q) => q.where('k.account_id', '=', key.accountId!))
        .executeTakeFirst();
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
      const r = await db
        .updateTable('oauth_codes')
        .set({ used_at: clock() })
        .where('account_id', '=', code.user.accountId)
        .where('id', '=', code.id)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) return true;
      await onReplay(code.user.accountId, code.id);
      return false;
    },

    async getRefreshToken(token: string) {
      const key = secretKey(token);
      const row = await db
        .selectFrom('oauth_tokens as t')
        .innerJoin('users as u', (j) => j.onRef('u.account_id', '=', 't.account_id').onRef('u.id', '=', 't.user_id'))
        .innerJoin('oauth_clients as c', 'c.client_id', 't.client_id')
        .select(['t.id', 't.client_id', 't.user_id', 't.account_id', 't.permissions', 't.code_id', 't.expires_at'])
        .where('t.token_hash', '=', key.hash)
        .$if(key.accountId !== undefined, (q) => q.where('t.account_id', '=', key.accountId!))
        .where('t.kind', '=', 'refresh')
        .where('t.revoked', '=', 0)
        .where('u.deleted', '=', 0)
        .where('c.revoked', '=', 0)
        .executeTakeFirst();
      if (!row) return null;
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

    /** Required by the library; never called because refresh tokens are not rotated. */
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
      const { access, refresh } = await withTransaction(database, async (trx) => {
        const access = await issueToken(trx, 'access', { ...grant, refreshId: spec.refreshId ?? null }, now);
        const refresh = spec.offline ? await issueToken(trx, 'refresh', grant, now) : undefined;
        // Refresh tokens expire after 60 days without use: each use slides the window.
        if (spec.refreshId !== undefined) {
          await trx
            .updateTable('oauth_tokens')
            .set({ expires_at: now + REFRESH_TOKEN_IDLE_S * 1000 })
            .where('account_id', '=', user.accountId)
            .where('id', '=', spec.refreshId)
            .execute();
        }
        return { access, refresh };
      });
      // A concurrent replay may have revoked by code_id before these rows were visible to it. It
      // marks the code before revoking, so checking the mark after inserting closes that gap. The
      // redemption still won (200, as if the replay came later), but what it got is revoked.
      if (spec.codeId !== null) {
        const code = await db
          .selectFrom('oauth_codes')
          .select('replayed_at')
          .where('account_id', '=', user.accountId)
          .where('id', '=', spec.codeId)
          .executeTakeFirst();
        if (code?.replayed_at != null) await revokeTokens(db, { accountId: user.accountId, codeId: spec.codeId });
      }
      // Likewise a refresh token revoked (RFC 7009, connected applications) while this grant ran:
      // the revocation may not have seen the new access token, so it is revoked here.
      if (spec.refreshId !== undefined) {
        const parent = await db
          .selectFrom('oauth_tokens')
          .select('revoked')
          .where('account_id', '=', user.accountId)
          .where('id', '=', spec.refreshId)
          .executeTakeFirst();
        if (parent?.revoked !== 0)
          await db
            .updateTable('oauth_tokens')
            .set({ revoked: 1 })
            .where('account_id', '=', user.accountId)
            .where('id', '=', access.id)
            .execute();
      }
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
