import { sql } from 'kysely';
import { nextCount, numbered } from '../../db/counters.js';
import type { Executor } from '../../db/runner.js';

/**
 * What every new job gets, whoever makes it (POST /jobs, an agreement's occurrences): its
 * reference from the account's counter and the account's default status.
 */

/**
 * The next free `J-000123` of the account. The counter is bumped by an upsert inside the write
 * transaction: PostgreSQL row-locks it and SQLite holds its write lock, so concurrent creates
 * never draw the same number. Numbers a client already used by hand are skipped.
 */
export async function nextReference(db: Executor, accountId: number): Promise<string> {
  for (;;) {
    const reference = numbered('J', await nextCount(db, accountId, 'jobs'));
    const taken = await db
      .selectFrom('jobs')
      .select('id')
      .where('account_id', '=', accountId)
      .where('reference', '=', reference)
      .executeTakeFirst();
    if (!taken) return reference;
  }
}

/** The account's default status: the one new jobs get (PRODUCT §4). */
export async function defaultStatus(db: Executor, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('statuses')
    .select('id')
    .where('account_id', '=', accountId)
    .where('is_default', '=', 1)
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * `n` new job references (`J-000123`, as a job made by hand gets), drawn from the account's counter
 * in one statement; any already taken (a reference given by hand) is replaced by the next free one.
 */
export async function nextReferences(db: Executor, accountId: number, n: number): Promise<string[]> {
  const { value } = await db
    .insertInto('counters')
    .values({ account_id: accountId, name: 'jobs', value: n })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: sql`counters.value + ${n}` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  const last = Number(value);
  const drawn = Array.from({ length: n }, (_, k) => numbered('J', last - n + 1 + k));
  const taken = new Set<string>();
  for (let i = 0; i < drawn.length; i += 500) {
    const rows = await db
      .selectFrom('jobs')
      .select('reference')
      .where('account_id', '=', accountId)
      .where('reference', 'in', drawn.slice(i, i + 500))
      .execute();
    for (const r of rows) taken.add(r.reference);
  }
  const out: string[] = [];
  for (const r of drawn) out.push(taken.has(r) ? await nextReference(db, accountId) : r);
  return out;
}
