import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './index.js';
import type { DB } from './types.js';

export type Executor = Kysely<DB> | Transaction<DB>;

/** The collection machinery builds queries from declarations, so it works on untyped table names. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const untyped = (db: Executor) => db as unknown as Kysely<any>;

/**
 * Runs fn in one write transaction. SQLite takes the write lock up front (BEGIN IMMEDIATE), so
 * concurrent writers from other processes wait on busy_timeout instead of failing mid-transaction.
 */
export async function withTransaction<T>(database: Database, fn: (trx: Executor) => Promise<T>): Promise<T> {
  if (database.dialect === 'postgres') return database.db.transaction().execute(fn);
  return database.db.connection().execute(async (conn) => {
    database.bindDirect?.(conn);
    await sql`begin immediate`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}
