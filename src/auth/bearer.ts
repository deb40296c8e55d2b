import type { InferResult, Kysely } from 'kysely';
import { prepared, run, slot } from '../db/compiled.js';
import type { Database } from '../db/index.js';
import type { DB } from '../db/types.js';
import { ApiError } from '../http/errors.js';
import type { AuthContext, RoleKind } from './context.js';
import { hashToken } from './secrets.js';

// The scheme is case-insensitive (RFC 7235 §2.1), followed by one or more spaces.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** What is wrong with an Authorization header that is not `Bearer <token>`, in words a client can act on. */
function malformed(header: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: |$)/.exec(header)?.[1];
  if (scheme && /^bearer$/i.test(scheme)) return 'the token after "Bearer " is empty or has characters an access token never has';
  if (scheme && /^(basic|digest|token|jwt|negotiate)$/i.test(scheme)) return `the ${scheme} scheme is not accepted; send 'Authorization: Bearer <access token>'`;
  return "the Bearer scheme is missing; send 'Authorization: Bearer <access token>'";
}

function challenge(error?: string): Record<string, string> {
  return { 'www-authenticate': error ? `Bearer realm="api", error="${error}"` : 'Bearer realm="api"' };
}

const tokenLookup = (db: Kysely<DB>, hash: string) =>
  db
    .selectFrom('oauth_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .innerJoin('oauth_clients as c', 'c.client_id', 't.client_id')
    .select(['t.account_id', 't.user_id', 't.permissions', 't.client_id', 't.expires_at', 'r.kind'])
    .where('t.token_hash', '=', hash)
    .where('t.kind', '=', 'access')
    .where('t.revoked', '=', 0)
    .where('u.deleted', '=', 0)
    .where('c.revoked', '=', 0);

type TokenRow = InferResult<ReturnType<typeof tokenLookup>>[number];

/**
 * The lookup runs on every request, so it is built and compiled once per database (the profile
 * showed query building on the hot path); each request only binds its token's hash.
 */
const tokenQuery = (db: Kysely<DB>) => prepared<TokenRow>(db, 'bearer', () => tokenLookup(db, slot('hash')).compile(), { oneRow: true });

/**
 * Tokens carry one of a few permission lists, so each is parsed once (parsing the JSON and building
 * the set was a tenth of the non-database time of W3). The sets are shared: read-only.
 */
const permissionSets = new Map<string, ReadonlySet<string>>();
function permissionSet(json: string): ReadonlySet<string> {
  let set = permissionSets.get(json);
  if (!set) {
    set = new Set(JSON.parse(json) as string[]);
    if (permissionSets.size >= 1000) permissionSets.clear();
    permissionSets.set(json, set);
  }
  return set;
}

/**
 * Checks a bearer token against the database on every request, so revocation, expiry, a deleted
 * user or a revoked client take effect at once in every worker. The token's hash comes back too:
 * it keys the token's rate-limit bucket without hashing again.
 */
export async function authenticate(database: Database, header: string | undefined, now: number): Promise<AuthContext & { tokenHash: string }> {
  if (!header) throw new ApiError('tokenMissing', undefined, challenge());
  const m = BEARER.exec(header);
  if (!m) throw new ApiError('tokenInvalid', malformed(header), challenge('invalid_token'));
  const tokenHash = hashToken(m[1]);
  const rows = await run(database.db, tokenQuery(database.db).bind({ hash: tokenHash }));
  const row = rows[0];
  if (!row || row.expires_at <= now) throw new ApiError('tokenInvalid', undefined, challenge('invalid_token'));
  return {
    accountId: row.account_id,
    userId: row.user_id,
    role: row.kind as RoleKind,
    permissions: permissionSet(row.permissions),
    clientId: row.client_id,
    now,
    tokenHash,
  };
}
