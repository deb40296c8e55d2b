import type { Executor } from '../db/tx.js';
import { accountSecret, hashToken } from './secrets.js';

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
  const row = await db
    .insertInto('oauth_tokens')
    .values({
      token_hash: hashToken(token),
      kind,
      client_id: grant.clientId,
      user_id: grant.userId,
      account_id: grant.accountId,
      permissions: JSON.stringify(grant.permissions),
      code_id: grant.codeId ?? null,
      refresh_id: grant.refreshId ?? null,
      expires_at: expiresAt,
      revoked: 0,
      created: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { token, id: row.id, expiresAt };
}

/**
 * Revokes every token of a user (deletion) or issued from one code (replay), in their account; or
 * of a client, in every account (the operator revoking it).
 */
export async function revokeTokens(
  db: Executor,
  where: { accountId: number; userId?: number; codeId?: number } | { clientId: string },
): Promise<void> {
  let q = db.updateTable('oauth_tokens').set({ revoked: 1 });
  if ('accountId' in where) q = q.where('account_id', '=', where.accountId);
  if ('userId' in where && where.userId !== undefined) q = q.where('user_id', '=', where.userId);
  if ('codeId' in where && where.codeId !== undefined) q = q.where('code_id', '=', where.codeId);
  if ('clientId' in where) q = q.where('client_id', '=', where.clientId);
  await q.execute();
}
