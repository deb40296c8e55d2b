import type { InferResult, Kysely } from 'kysely';
import type { Database } from '../db/index.js';
import { query, slot } from '../db/runner.js';
import type { DB } from '../db/types.js';
import { ApiError } from '../errors.js';
import type { AuthContext, RoleKind } from './context.js';
import { epochOf } from './epochs.js';
import { secretKey } from './secrets.js';

// The scheme is case-insensitive (RFC 7235 §2.1), followed by one or more spaces.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** What is wrong with an Authorization header that is not `Bearer <token>`, in words a client can act on. */
function malformed(header: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: |$)/.exec(header)?.[1];
  if (scheme && /^bearer$/i.test(scheme))
    return 'the token after "Bearer " is empty or has characters an access token never has';
  if (scheme && /^(basic|digest|token|jwt|negotiate)$/i.test(scheme))
    return `the ${scheme} scheme is not accepted; send 'Authorization: Bearer <access token>'`;
  return "the Bearer scheme is missing; send 'Authorization: Bearer <access token>'";
}

function challenge(error?: string): Record<string, string> {
  return { 'www-authenticate': error ? `Bearer realm="api", error="${error}"` : 'Bearer realm="api"' };
}

/** The token's row in the account it names (or by its hash alone: `account` undefined, one issued before). */
const tokenLookup = (db: Kysely<DB>, hash: string, account?: number) =>
  db
    .selectFrom('oauth_tokens as t')
    .innerJoin('users as u', (j) => j.onRef('u.account_id', '=', 't.account_id').onRef('u.id', '=', 't.user_id'))
    .innerJoin('roles as r', (j) => j.onRef('r.account_id', '=', 'u.account_id').onRef('r.id', '=', 'u.role_id'))
    .innerJoin('oauth_clients as c', 'c.client_id', 't.client_id')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select(['t.account_id', 't.user_id', 't.permissions', 't.client_id', 't.expires_at', 'r.kind', 'a.auth_epoch'])
    .where('t.token_hash', '=', hash)
    .$if(account !== undefined, (q) => q.where('t.account_id', '=', account!))
    .where('t.kind', '=', 'access')
    .where('t.revoked', '=', 0)
    .where('u.deleted', '=', 0)
    .where('c.revoked', '=', 0);

type TokenRow = InferResult<ReturnType<typeof tokenLookup>>[number];

/**
 * The token's verification: built once per database; each request only binds its token's hash
 * (and the account its token names; a token issued before tokens named their account has none).
 */
const verify = (db: Kysely<DB>, hash: string, account: number | undefined) =>
  account === undefined
    ? query<TokenRow>(db, 'bearer legacy', () => tokenLookup(db, slot('hash')), { hash }, { oneRow: true })
    : query<TokenRow>(
        db,
        'bearer',
        () => tokenLookup(db, slot('hash'), slot<number>('account')),
        { hash, account },
        {
          oneRow: true,
        },
      );
/** A token the join above accepted, and the account's epoch it was accepted under. */
interface Verified {
  accountId: number;
  userId: number;
  role: RoleKind;
  permissions: ReadonlySet<string>;
  clientId: string;
  expiresAt: number;
  epoch: number;
}
/** Verified tokens per process and database, by the token's hash; the oldest go first past the bound. */
const MAX_CACHED = 10_000;
const caches = new WeakMap<Kysely<DB>, Map<string, Verified>>();
function cacheOf(db: Kysely<DB>): Map<string, Verified> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  return cache;
}

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
 * The caller of a request with a bearer token. A token is verified by the join above once, then
 * cached in the process by its hash with the account's revocation epoch (`accounts.auth_epoch`,
 * migration 013). Every later request reads that epoch by primary key: triggers bump it in the
 * same transaction as every change that can fail a token of the account (a token revoked or
 * deleted, a user deleted or given another role, a client revoked), so when it has moved the token
 * is verified again, and a revocation takes effect on the very next request in every process and
 * on every host. The join reads the epoch in the same statement (one snapshot): a revocation
 * committed after it moves the epoch past the cached one. Expiry is checked on every request. The
 * token's hash comes back too: it keys the token's rate-limit bucket without hashing again.
 */
export async function authenticate(
  database: Database,
  header: string | undefined,
  now: number,
): Promise<AuthContext & { tokenHash: string }> {
  if (!header) throw new ApiError('tokenMissing', undefined, challenge());
  const m = BEARER.exec(header);
  if (!m) throw new ApiError('tokenInvalid', malformed(header), challenge('invalid_token'));
  const { hash: tokenHash, accountId: named } = secretKey(m[1]);
  const db = database.db;
  const cache = cacheOf(db);
  let v = cache.get(tokenHash);
  if (v) {
    const epoch = await epochOf(db, v.accountId);
    if (epoch === undefined || Number(epoch) !== v.epoch) {
      cache.delete(tokenHash);
      v = undefined;
    }
  }
  if (!v) {
    const [row] = await verify(db, tokenHash, named);
    if (!row) throw new ApiError('tokenInvalid', undefined, challenge('invalid_token'));
    v = {
      accountId: row.account_id,
      userId: row.user_id,
      role: row.kind as RoleKind,
      permissions: permissionSet(row.permissions),
      clientId: row.client_id,
      expiresAt: Number(row.expires_at),
      epoch: Number(row.auth_epoch),
    };
    if (v.expiresAt > now) {
      if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
      cache.set(tokenHash, v);
    }
  }
  if (v.expiresAt <= now) {
    cache.delete(tokenHash);
    throw new ApiError('tokenInvalid', undefined, challenge('invalid_token'));
  }
  return {
    accountId: v.accountId,
    userId: v.userId,
    role: v.role,
    permissions: v.permissions,
    clientId: v.clientId,
    now,
    tokenHash,
  };
}
