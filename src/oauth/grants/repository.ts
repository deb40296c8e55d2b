import type { InferResult, Insertable, Kysely } from 'kysely';
import { query, slot } from '../../db/runner.js';
import type { Executor } from '../../db/tx.js';
import type { DB } from '../../db/types.js';

/**
 * The authorization server's statements of codes and tokens: the grants' (model.ts, codes.ts),
 * the revocation and introspection endpoints' and the connected applications'. The sign-in pages'
 * are in ../pages/pages-repository.ts. Every row is found by a hash and, where the secret names one, its
 * account; the modules beside them keep the rules.
 */

// Authorization codes (codes.ts, model.ts).

/** Stores a new code (its hash) after dropping unused ones a day past their expiry. */
export async function insertCode(db: Executor, row: Insertable<DB['oauth_codes']>, now: number): Promise<void> {
  await db
    .deleteFrom('oauth_codes')
    .where('expires_at', '<=', now - 24 * 3600 * 1000)
    .where('used_at', 'is', null)
    .execute();
  await db.insertInto('oauth_codes').values(row).execute();
}

/** The code of this hash (in its account, when the code names one), with its client's redirect URIs. */
export function codeByHash(db: Executor, hash: string, accountId: number | undefined) {
  return db
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
    .where('k.code_hash', '=', hash)
    .$if(accountId !== undefined, (q) => q.where('k.account_id', '=', accountId!))
    .executeTakeFirst();
}

/** Marks a code used, if nobody did first: whether this call did (single use, atomically). */
export async function useCode(db: Executor, accountId: number, id: number, now: number): Promise<boolean> {
  const r = await db
    .updateTable('oauth_codes')
    .set({ used_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Marks a code replayed (before what it issued is revoked). */
export async function markReplayed(db: Executor, accountId: number, id: number, now: number): Promise<void> {
  await db
    .updateTable('oauth_codes')
    .set({ replayed_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Whether a code was replayed. */
export async function wasReplayed(db: Executor, accountId: number, id: number): Promise<boolean> {
  const code = await db
    .selectFrom('oauth_codes')
    .select('replayed_at')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return code?.replayed_at != null;
}

// Refresh tokens as the grants use them (model.ts; issuing and revoking are auth/tokens.ts').

/**
 * A refresh token's row in the account it names (or by its hash alone: one issued before tokens
 * named their account), with its user not deleted and its client not revoked. A token replaced by
 * rotation is found too: presenting it again is reuse.
 */
const refreshLookup = (db: Kysely<DB>, hash: string, account?: number) =>
  db
    .selectFrom('oauth_tokens as t')
    .innerJoin('users as u', (j) => j.onRef('u.account_id', '=', 't.account_id').onRef('u.id', '=', 't.user_id'))
    .innerJoin('oauth_clients as c', 'c.client_id', 't.client_id')
    .select([
      't.id',
      't.client_id',
      't.user_id',
      't.account_id',
      't.permissions',
      't.code_id',
      't.expires_at',
      't.replaced_at',
    ])
    .where('t.token_hash', '=', hash)
    .$if(account !== undefined, (q) => q.where('t.account_id', '=', account!))
    .where('t.kind', '=', 'refresh')
    .where((eb) => eb.or([eb('t.revoked', '=', 0), eb('t.replaced_at', 'is not', null)]))
    .where('u.deleted', '=', 0)
    .where('c.revoked', '=', 0);

type RefreshRow = InferResult<ReturnType<typeof refreshLookup>>[number];

export async function refreshByHash(
  db: Kysely<DB>,
  key: { hash: string; accountId?: number },
): Promise<RefreshRow | undefined> {
  const [row] =
    key.accountId === undefined
      ? await query<RefreshRow>(db, 'refresh token legacy', () => refreshLookup(db, slot('hash')), key, {
          oneRow: true,
        })
      : await query<RefreshRow>(
          db,
          'refresh token',
          () => refreshLookup(db, slot('hash'), slot<number>('accountId')),
          key,
          { oneRow: true },
        );
  return row;
}

/** Ends a refresh token replaced by rotation, unless someone ended it first: whether this call did. */
export async function endRotated(db: Executor, accountId: number, id: number, now: number): Promise<boolean> {
  const ended = await db
    .updateTable('oauth_tokens')
    .set({ revoked: 1, replaced_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked', '=', 0)
    .where('replaced_at', 'is', null)
    .executeTakeFirst();
  return Number(ended.numUpdatedRows) === 1;
}

/** A refresh token's new expiry (each use slides its idle window). */
export async function slideRefresh(db: Executor, accountId: number, id: number, expires: number): Promise<void> {
  await query(
    db,
    'slide refresh token',
    () =>
      db
        .updateTable('oauth_tokens')
        .set({ expires_at: slot<number>('expires') })
        .where('account_id', '=', slot<number>('account'))
        .where('id', '=', slot<number>('id')),
    { expires, account: accountId, id },
  );
}

/** Whether the account's token is revoked (or gone). */
export async function tokenRevoked(db: Executor, accountId: number, id: number): Promise<boolean> {
  const [row] = await query<{ revoked: number }>(
    db,
    'refresh token revoked',
    () =>
      db
        .selectFrom('oauth_tokens')
        .select('revoked')
        .where('account_id', '=', slot<number>('account'))
        .where('id', '=', slot<number>('id')),
    { account: accountId, id },
    { oneRow: true },
  );
  return row?.revoked !== 0;
}

export async function revokeToken(db: Executor, accountId: number, id: number): Promise<void> {
  await db
    .updateTable('oauth_tokens')
    .set({ revoked: 1 })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

// Tokens as the revocation and introspection endpoints and the connected applications see them
// (token-records.ts, connections.ts).

/** The token of this hash (in its account, when the token names one) if `clientId` holds it, with its owner and client. */
export function clientTokenByHash(db: Executor, hash: string, accountId: number | undefined, clientId: string) {
  return db
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
    .where('t.token_hash', '=', hash)
    .$if(accountId !== undefined, (q) => q.where('t.account_id', '=', accountId!))
    .where('t.client_id', '=', clientId)
    .executeTakeFirst();
}

/**
 * Revokes a token record's rows: an access token alone; a refresh token with every token of its
 * grant (issued from it, or from its code). Limited to its client and owner.
 */
export async function revokeTokenRows(
  db: Executor,
  token: {
    id: number;
    kind: 'access' | 'refresh';
    accountId: number;
    clientId: string;
    userId: number;
    codeId: number | null;
  },
): Promise<void> {
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
}

/** The owner's unrevoked, unexpired tokens of clients not revoked, with their client's name and publisher. */
export function connectionRows(db: Executor, owner: { userId: number; accountId: number }, now: number) {
  return db
    .selectFrom('oauth_tokens as t')
    .innerJoin('oauth_clients as c', 'c.client_id', 't.client_id')
    .select(['t.client_id', 'c.name', 'c.publisher', 't.permissions', 't.created'])
    .where('t.user_id', '=', owner.userId)
    .where('t.account_id', '=', owner.accountId)
    .where('t.revoked', '=', 0)
    .where('t.expires_at', '>', now)
    .where('c.revoked', '=', 0)
    .execute();
}

/** Revokes every token a client holds for the owner and deletes its codes not yet redeemed. */
export async function endClientAccess(
  db: Executor,
  owner: { userId: number; accountId: number },
  clientId: string,
): Promise<void> {
  await db
    .updateTable('oauth_tokens')
    .set({ revoked: 1 })
    .where('user_id', '=', owner.userId)
    .where('account_id', '=', owner.accountId)
    .where('client_id', '=', clientId)
    .execute();
  await db
    .deleteFrom('oauth_codes')
    .where('user_id', '=', owner.userId)
    .where('account_id', '=', owner.accountId)
    .where('client_id', '=', clientId)
    .where('used_at', 'is', null)
    .execute();
}
