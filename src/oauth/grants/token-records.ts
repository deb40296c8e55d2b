import { clientTokenByHash, revokeTokenRows } from './repository.js';
import type { Executor } from '../../db/tx.js';
import { secretKey } from '../../auth/secrets.js';
import { forgetConsent } from '../../auth/consents.js';

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
  const row = await clientTokenByHash(db, key.hash, key.accountId, clientId);
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
  await revokeTokenRows(db, token);
  await forgetConsent(db, { accountId: token.accountId, userId: token.userId, clientId: token.clientId });
}
