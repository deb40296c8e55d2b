import type { Executor } from '../db/tx.js';
import { secretKey } from '../auth/secrets.js';
import { forgetConsent } from '../auth/consents.js';

/** A stored token as revocation and introspection see it, whatever its state. */
export interface TokenRecord {
  id: number;
  kind: 'access' | 'refresh';
  clientId: string;
  accountId: number;
  userId: number;
  /** The owner's login; null for a user who has none. */
  login: string | null;
  permissions: string[];
  codeId: number | null;
  expiresAt: number;
  created: number;
  /** Not revoked, not expired, its user not deleted and its client not revoked. */
  live: boolean;
}

/**
 * The token a client presents, only when that client holds it: another client's token is looked
 * up exactly like an unknown one (RFC 7009 §2.1, RFC 7662 §4), so neither endpoint reveals it.
 */
export async function findClientToken(
  db: Executor,
  token: string,
  clientId: string,
  now: number,
): Promise<TokenRecord | undefined> {
  const key = secretKey(token);
  const row = await db
    .selectFrom('oauth_tokens as t')
    .innerJoin('users as u', (j) => j.onRef('u.account_id', '=', 't.account_id').onRef('u.id', '=', 't.user_id'))
    .innerJoin('oauth_clients as c', 'c.client_id', 't.client_id')
    .select([
      't.id',
      't.kind',
      't.client_id',
      't.account_id',
      't.user_id',
      't.permissions',
      't.code_id',
      't.expires_at',
      't.created',
      't.revoked',
      'u.login',
      'u.deleted',
      'c.revoked as client_revoked',
    ])
    .where('t.token_hash', '=', key.hash)
    .$if(key.accountId !== undefined, (q) => q.where('t.account_id', '=', key.accountId!))
    .where('t.client_id', '=', clientId)
    .executeTakeFirst();
  if (!row) return undefined;
  const expiresAt = Number(row.expires_at);
  return {
    id: row.id,
    kind: row.kind === 'refresh' ? 'refresh' : 'access',
    clientId: row.client_id,
    accountId: row.account_id,
    userId: row.user_id,
    login: row.login,
    permissions: JSON.parse(row.permissions) as string[],
    codeId: row.code_id,
    expiresAt,
    created: Number(row.created),
    live: row.revoked === 0 && expiresAt > now && row.deleted === 0 && row.client_revoked === 0,
  };
}

/**
 * Revokes a token. A refresh token takes with it every token of its grant (RFC 7009 §2.1: "SHOULD
 * also invalidate all access tokens based on the same authorization grant"): those issued from
 * it, and those issued with it from the same code. Limited to its client and owner. Either kind
 * also forgets the owner's remembered consent for the client: the next authorization asks again.
 */
export async function revokeTokenRecord(db: Executor, token: TokenRecord): Promise<void> {
  let q = db
    .updateTable('oauth_tokens')
    .set({ revoked: 1 })
    .where('account_id', '=', token.accountId)
    .where('client_id', '=', token.clientId)
    .where('user_id', '=', token.userId);
  if (token.kind === 'access') q = q.where('id', '=', token.id);
  else {
    q = q.where((eb) =>
      eb.or([
        eb('id', '=', token.id),
        eb('refresh_id', '=', token.id),
        ...(token.codeId !== null ? [eb('code_id', '=', token.codeId)] : []),
      ]),
    );
  }
  await q.execute();
  await forgetConsent(db, { accountId: token.accountId, userId: token.userId, clientId: token.clientId });
}
