import type { Database } from './index.js';
import type { Executor } from './runner.js';

export { untyped, type Executor } from './runner.js';

/** Runs fn in one write transaction of the database (Database.transaction). */
export function withTransaction<T>(database: Database, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return database.transaction(fn);
}
