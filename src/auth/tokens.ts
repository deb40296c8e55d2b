import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import { dialectOf, query, slot } from '../db/runner.js';
import type { Executor } from '../db/tx.js';
import type { DB } from '../db/types.js';
import { accountSecret, hashToken } from './secrets.js';
import { forgetConsent } from './consents.js';

export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_IDLE_S = 60 * 24 * 3600;

export interface Grant {
  clientId: string;
  userId: number;
  accountId: number;
  permissions: string[];
  codeId?: number | null;
  refreshId?: number | null;
}

/** Stores a new token (only its hash) and returns the token itself, which is shown once. */
export async function issueToken(
  db: Executor,
  kind: 'access' | 'refresh',
  grant: Grant,
  now: number,
): Promise<{ token: string; id: number; expiresAt: number }> {
  const token = accountSecret(grant.accountId);
  const expiresAt = now + (kind === 'access' ? ACCESS_TOKEN_TTL_S : REFRESH_TOKEN_IDLE_S) * 1000;
  // Built once per database: every grant inserts its tokens with this one statement.
  const [row] = await query<{ id: number }>(
    db,
    'issueToken',
    () =>
      db
        .insertInto('oauth_tokens')
        .values({
          token_hash: slot('hash'),
          kind: slot('kind'),
          client_id: slot('client'),
          user_id: slot<number>('user'),
          account_id: slot<number>('account'),
          permissions: slot('permissions'),
          code_id: slot<number>('code'),
          refresh_id: slot<number>('refresh'),
          expires_at: slot<number>('expires'),
          revoked: 0,
          created: slot<number>('now'),
        })
        .returning('id'),
    {
      hash: hashToken(token),
      kind,
      client: grant.clientId,
      user: grant.userId,
      account: grant.accountId,
      permissions: JSON.stringify(grant.permissions),
      code: grant.codeId ?? null,
      refresh: grant.refreshId ?? null,
      expires: expiresAt,
      now,
    },
  );
  return { token, id: row.id, expiresAt };
}

/**
 * Revokes every live token of a user (deletion, the operator's `fsm tokens revoke --user`), issued
 * from one code (replay) or of one refresh token's line (the token and those made from it), in
 * their account; or of a client, in every account (the operator revoking it). Answers how many
 * were still live.
 *
 * The rows are locked in key order first (PostgreSQL; SQLite's writers take turns). Two
 * revocations of one grant at once, as the losers of a refresh-token race start them, otherwise
 * locked the same rows in different orders, one of them while rechecking a row the other had
 * updated, and PostgreSQL ended one with "deadlock detected" (a 500 from the token endpoint in CI).
 */
export async function revokeTokens(
  db: Executor,
  where: { accountId: number; userId?: number; codeId?: number; refreshId?: number } | { clientId: string },
): Promise<number> {
  const matches = (eb: ExpressionBuilder<DB, 'oauth_tokens'>) => {
    const parts: Expression<SqlBool>[] = [eb('revoked', '=', 0)];
    if ('accountId' in where) parts.push(eb('account_id', '=', where.accountId));
    if ('userId' in where && where.userId !== undefined) parts.push(eb('user_id', '=', where.userId));
    if ('codeId' in where && where.codeId !== undefined) parts.push(eb('code_id', '=', where.codeId));
    if ('refreshId' in where && where.refreshId !== undefined)
      parts.push(eb.or([eb('id', '=', where.refreshId), eb('refresh_id', '=', where.refreshId)]));
    if ('clientId' in where) parts.push(eb('client_id', '=', where.clientId));
    return eb.and(parts);
  };
  const revoked = await db
    .updateTable('oauth_tokens')
    .set({ revoked: 1 })
    .where(matches)
    .where((eb) =>
      eb(
        eb.refTuple('account_id', 'id'),
        'in',
        eb
          .selectFrom('oauth_tokens')
          .select(['account_id', 'id'])
          .where(matches)
          .orderBy('account_id')
          .orderBy('id')
          .modifyEnd(dialectOf(db).lockClause('no key update'))
          .$asTuple('account_id', 'id'),
      ),
    )
    .executeTakeFirst();
  // A whole client (the operator revoking it) or a whole user (deleted): their remembered consents
  // go too, so a restored user or client is asked again (docs/oauth.md "Remembered consent").
  if ('clientId' in where) await forgetConsent(db, { clientId: where.clientId });
  else if (where.userId !== undefined && where.codeId === undefined && where.refreshId === undefined)
    await forgetConsent(db, { accountId: where.accountId, userId: where.userId });
  return Number(revoked.numUpdatedRows);
}
