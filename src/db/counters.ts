import { sql } from 'kysely';
import type { Executor } from './runner.js';

/**
 * Moves the account's counter `name` (`jobs`, `quotes`, `invoices`) on by one and answers its new
 * value, inside the caller's transaction: the upsert row-locks the counter on PostgreSQL until the
 * commit (SQLite holds its write lock), so transactions running at once draw numbers one after
 * another, and one that rolls back gives its number back.
 */
export async function nextCount(db: Executor, accountId: number, name: string): Promise<number> {
  const { value } = await db
    .insertInto('counters')
    .values({ account_id: accountId, name, value: 1 })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: sql`counters.value + 1` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  return Number(value);
}

/** A document's number as people read it: `J-000123`, `Q-000001`, `INV-000042`. */
export const numbered = (prefix: string, n: number): string => `${prefix}-${String(n).padStart(6, '0')}`;
