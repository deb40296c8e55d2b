import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { byKeys } from '../../db/keys.js';
import { query, slot, type Executor } from '../../db/runner.js';
import type { DB } from '../../db/types.js';

/** How long a claimed key blocks its repeats while the first request runs (then a repeat takes over). */
export const LEASE_MS = 60_000;
/** How long a final answer is kept. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

export interface Scope {
  accountId: number;
  clientId: string;
  userId: number;
  key: string;
}

/** An answer as kept and replayed: the exact body text sent the first time. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A claimed row: its key. */
export interface RowKey {
  accountId: number;
  id: number;
}

export type Claim =
  | { kind: 'claimed'; id: number; lease: string }
  | { kind: 'done'; answer: KeptAnswer }
  | { kind: 'mismatch' }
  | { kind: 'inFlight' };

type KeyRow = {
  id: number;
  fingerprint: string;
  state: string;
  lease: string;
  status: number | null;
  headers: string | null;
  body: string | null;
  created: number;
};

/** What a stored row of the key means for a request with `fingerprint` at `now`; 'expired' when it may be taken over. */
function judge(row: KeyRow, fingerprint: string, now: number): Exclude<Claim, { kind: 'claimed' }> | 'expired' {
  if (row.created + (row.state === 'pending' ? LEASE_MS : RETENTION_MS) <= now) return 'expired';
  if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (row.state === 'pending') return { kind: 'inFlight' };
  return {
    kind: 'done',
    answer: { status: row.status!, headers: JSON.parse(row.headers ?? '{}'), body: row.body ?? '' },
  };
}

const stored = (db: Executor, s: Scope) =>
  db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', s.accountId)
    .where('client_id', '=', s.clientId)
    .where('user_id', '=', s.userId)
    .where('key', '=', s.key)
    .executeTakeFirst();

/**
 * Claims the key for this request, each statement on its own (committed at once, outside the
 * write's transaction): the insert of a pending row succeeds for exactly one of any number of
 * concurrent requests (the unique index). A row whose lease or retention has run out is taken over
 * by a conditional update, which again only one request can win. For actions, whose work is not
 * one write of the pipeline (src/http/idempotency/index.ts).
 */
export async function claim(db: Kysely<DB>, s: Scope, fingerprint: string, now: number): Promise<Claim> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const lease = crypto.randomBytes(12).toString('base64url');
    const [inserted] = await insertClaim(db, {
      account: s.accountId,
      client: s.clientId,
      user: s.userId,
      key: s.key,
      fingerprint,
      lease,
      now,
    });
    if (inserted) return { kind: 'claimed', id: inserted.id, lease };
    const row = await stored(db, s);
    if (!row) continue; // purged in between: insert again
    const judged = judge(row, fingerprint, now);
    if (judged !== 'expired') return judged;
    // Expired: a crashed or failed first request, or an answer past its retention.
    const taken = await db
      .updateTable('idempotency_keys')
      .set({ fingerprint, state: 'pending', lease, status: null, headers: null, body: null, created: now })
      .where('account_id', '=', s.accountId)
      .where('id', '=', row.id)
      .where('lease', '=', row.lease)
      .where('state', '=', row.state)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) === 1) return { kind: 'claimed', id: row.id, lease };
  }
  return { kind: 'inFlight' };
}

/**
 * The answer of a write kept with the write, in its transaction, claiming the key at the same time
 * (one statement, no commit of its own): 'kept', or what the row another request stored means
 * (then this write must not commit). Two requests that both get here: the unique index lets one
 * insert; the other waits for its commit (PostgreSQL) or runs after it (SQLite), then finds its row.
 */
export async function keepOnce(
  db: Executor,
  s: Scope,
  fingerprint: string,
  now: number,
  answer: KeptAnswer,
): Promise<{ kind: 'kept' } | Exclude<Claim, { kind: 'claimed' }>> {
  const values = {
    account: s.accountId,
    client: s.clientId,
    user: s.userId,
    key: s.key,
    fingerprint,
    now,
    status: answer.status,
    headers: JSON.stringify(answer.headers),
    body: answer.body,
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const [inserted] = await insertKept(db, values);
    if (inserted) return { kind: 'kept' };
    const row = await stored(db, s);
    if (!row) continue;
    const judged = judge(row, fingerprint, now);
    if (judged !== 'expired') return judged;
    const taken = await db
      .updateTable('idempotency_keys')
      .set({
        fingerprint,
        state: 'done',
        lease: '',
        status: answer.status,
        headers: values.headers,
        body: answer.body,
        created: now,
      })
      .where('account_id', '=', s.accountId)
      .where('id', '=', row.id)
      .where('lease', '=', row.lease)
      .where('state', '=', row.state)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) === 1) return { kind: 'kept' };
  }
  return { kind: 'inFlight' };
}

/**
 * Keeps the final answer on the claimed row, while the claim still holds (`pending` under our
 * lease). Inside the write's transaction this commits or rolls back with the write; false means
 * another request took the key over (our lease ran out), and the write must not commit.
 */
export async function keep(db: Executor, row: RowKey, lease: string, answer: KeptAnswer): Promise<boolean> {
  const updated = await updateKept(db, {
    account: row.accountId,
    id: row.id,
    lease,
    status: answer.status,
    headers: JSON.stringify(answer.headers),
    body: answer.body,
  });
  return updated.length === 1;
}

// The statements every keyed write runs, built once (src/db/runner.ts).
const insertClaim = (db: Executor, values: Record<string, unknown>) =>
  query<{ id: number }>(
    db,
    'idempotency|claim',
    () =>
      db
        .insertInto('idempotency_keys')
        .values({
          account_id: slot<number>('account'),
          client_id: slot('client'),
          user_id: slot<number>('user'),
          key: slot('key'),
          fingerprint: slot('fingerprint'),
          state: 'pending',
          lease: slot('lease'),
          created: slot<number>('now'),
        })
        .onConflict((oc) => oc.columns(['account_id', 'client_id', 'user_id', 'key']).doNothing())
        .returning('id'),
    values,
  );

const insertKept = (db: Executor, values: Record<string, unknown>) =>
  query<{ id: number }>(
    db,
    'idempotency|keepOnce',
    () =>
      db
        .insertInto('idempotency_keys')
        .values({
          account_id: slot<number>('account'),
          client_id: slot('client'),
          user_id: slot<number>('user'),
          key: slot('key'),
          fingerprint: slot('fingerprint'),
          state: 'done',
          lease: '',
          created: slot<number>('now'),
          status: slot<number>('status'),
          headers: slot('headers'),
          body: slot('body'),
        })
        .onConflict((oc) => oc.columns(['account_id', 'client_id', 'user_id', 'key']).doNothing())
        .returning('id'),
    values,
  );

const updateKept = (db: Executor, values: Record<string, unknown>) =>
  query<{ id: number }>(
    db,
    'idempotency|keep',
    () =>
      db
        .updateTable('idempotency_keys')
        .set({ state: 'done', status: slot<number>('status'), headers: slot('headers'), body: slot('body') })
        .where('account_id', '=', slot<number>('account'))
        .where('id', '=', slot<number>('id'))
        .where('lease', '=', slot('lease'))
        .where('state', '=', 'pending')
        .returning('id'),
    values,
  );

/** Gives the key up (a 5xx: nothing was committed, so a retry runs again). */
export async function release(db: Kysely<DB>, row: RowKey, lease: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', row.accountId)
    .where('id', '=', row.id)
    .where('lease', '=', lease)
    .where('state', '=', 'pending')
    .execute();
}

/** Deletes up to `limit` rows claimed more than 24 h ago (answers and dead claims); returns how many. */
export async function purgeExpired(db: Kysely<DB>, now: number, limit = 500): Promise<number> {
  const before = now - RETENTION_MS;
  const rows = await db
    .selectFrom('idempotency_keys')
    .select(['account_id', 'id'])
    .where('created', '<', before)
    .limit(limit)
    .execute();
  if (!rows.length) return 0;
  const r = await db
    .deleteFrom('idempotency_keys')
    .where(byKeys(rows))
    .where('created', '<', before)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
