import { sql } from 'kysely';
import type { Executor } from '../../db/runner.js';

/** The jobs collection's own queries (its rules ask these). */

/**
 * The next free `J-000123` of the account. The counter is bumped by an upsert inside the write
 * transaction: PostgreSQL row-locks it and SQLite holds its write lock, so concurrent creates
 * never draw the same number. Numbers a client already used by hand are skipped.
 */
export async function nextReference(db: Executor, accountId: number): Promise<string> {
  for (;;) {
    const { value } = await db
      .insertInto('counters')
      .values({ account_id: accountId, name: 'jobs', value: 1 })
      .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: sql`counters.value + 1` }))
      .returning('value')
      .executeTakeFirstOrThrow();
    const reference = `J-${String(value).padStart(6, '0')}`;
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
