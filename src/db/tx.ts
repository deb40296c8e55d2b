import type { Database } from './index.js';
import { dialectOf, type Executor } from './runner.js';

export { untyped, type Executor } from './runner.js';

/** Runs fn in one write transaction of the database (Database.transaction). */
export function withTransaction<T>(database: Database, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return database.transaction(fn);
}

/**
 * Makes what `has` finds missing, for each table, at start: in a write transaction after checking
 * again, under a lock on the key, so processes starting together make it once.
 */
export async function ensureForTables(
  database: Database,
  tables: readonly string[],
  what: string,
  has: (db: Executor, table: string) => Promise<boolean>,
  make: (db: Executor, table: string) => Promise<void>,
): Promise<void> {
  for (const table of tables) {
    if (await has(database.db, table)) continue;
    await withTransaction(database, async (db) => {
      await dialectOf(db).lockKey(db, `${what}:${table}`);
      if (!(await has(db, table))) await make(db, table);
    });
  }
}
