import type pg from 'pg';
import type { Kysely } from 'kysely';
import type { DialectStrategy } from './dialect.js';
import { MigrationFailed, migrateToLatest } from './migrate.js';
import { connectionProblem, databaseLabel } from './problems.js';
import type { QueryObserver } from './observe.js';
import { openPostgres } from './postgres.js';
import type { Executor } from './runner.js';
import { openSqlite } from './sqlite.js';
import type { DB } from './types.js';

export type { QueryObserver } from './observe.js';
export type { DialectName, DialectStrategy } from './dialect.js';
/** The dialect's name, as migrations (frozen history) receive it. */
export type { DialectName as Dialect } from './dialect.js';
export type { Executor } from './runner.js';

export interface Database {
  db: Kysely<DB>;
  /** The one object that answers every "which database?" question (src/db/dialect.ts). */
  dialect: DialectStrategy;
  /**
   * Runs fn in one write transaction. SQLite takes the write lock up front (BEGIN IMMEDIATE), so
   * concurrent writers from other processes wait on busy_timeout instead of failing mid-transaction.
   */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  /**
   * Runs fn on one consistent snapshot, read only (an account's export, PRODUCT §19): PostgreSQL's
   * REPEATABLE READ; SQLite's read transaction on a connection of its own. Holds no write lock.
   */
  snapshot<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** PostgreSQL's connection pool, for its gauges (src/http/metrics.ts); none on SQLite. */
  pool?: pg.Pool;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** SQLite file; ':memory:' is accepted for throw-away use. */
  sqliteFile?: string;
  poolSize?: number;
  observe?: QueryObserver;
  /**
   * SQLite file: run WAL checkpoints on a thread of their own (src/db/checkpointer.ts) instead of
   * at the end of a commit on the event loop. For the server; short-lived processes (the CLI)
   * leave SQLite's automatic checkpoints on.
   */
  backgroundCheckpoints?: boolean;
  /** How often that thread checks the planner statistics (default 10 s; tests shorten it). */
  statisticsEveryMs?: number;
}

export function openDatabase(opts: DatabaseOptions): Database {
  return opts.databaseUrl ? openPostgres({ ...opts, databaseUrl: opts.databaseUrl }) : openSqlite(opts);
}

/** Opens the database the configuration names and applies every pending migration. */
export async function connect(opts: DatabaseOptions): Promise<Database> {
  // A database that cannot be opened or reached says where it is and what is wrong (as `fsm doctor`).
  const unusable = (err: unknown) =>
    err instanceof MigrationFailed
      ? err
      : new Error(`${databaseLabel(opts)}: ${connectionProblem(err)}`, { cause: err });
  let database: Database;
  try {
    database = openDatabase(opts);
  } catch (err) {
    throw unusable(err);
  }
  try {
    await migrateToLatest(database);
  } catch (err) {
    await database.close().catch(() => {});
    throw unusable(err);
  }
  return database;
}
