import type { Database } from '../db/index.js';
import { ApiError } from '../http/errors.js';
import type { AuthContext, RoleKind } from '../collections/machinery/collection.js';
import { hashToken } from './secrets.js';

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/;

function challenge(error?: string): Record<string, string> {
  return { 'www-authenticate': error ? `Bearer realm="api", error="${error}"` : 'Bearer realm="api"' };
}

/**
 * Checks a bearer token against the database on every request, so revocation, expiry, a deleted
 * user or a revoked client take effect at once in every worker.
 */
export async function authenticate(database: Database, header: string | undefined, now: number): Promise<AuthContext> {
  if (!header) throw new ApiError('tokenMissing', undefined, challenge());
  const m = BEARER.exec(header);
  if (!m) throw new ApiError('tokenInvalid', undefined, challenge('invalid_token'));
  const row = await database.db
    .selectFrom('oauth_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .innerJoin('oauth_clients as c', 'c.client_id', 't.client_id')
    .select(['t.account_id', 't.user_id', 't.permissions', 't.client_id', 't.expires_at', 'r.kind'])
    .where('t.token_hash', '=', hashToken(m[1]))
    .where('t.kind', '=', 'access')
    .where('t.revoked', '=', 0)
    .where('u.deleted', '=', 0)
    .where('c.revoked', '=', 0)
    .executeTakeFirst();
  if (!row || row.expires_at <= now) throw new ApiError('tokenInvalid', undefined, challenge('invalid_token'));
  return {
    accountId: row.account_id,
    userId: row.user_id,
    role: row.kind as RoleKind,
    permissions: new Set(JSON.parse(row.permissions) as string[]),
    clientId: row.client_id,
    now,
  };
}
