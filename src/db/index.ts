import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { DB } from './types.js';
import { migrateToLatest } from './migrate.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  close(): Promise<void>;
}

// int8 (counts, bigint columns) and numeric come back as strings from pg by default.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export interface DatabaseOptions {
  databaseUrl?: string;
  /** SQLite file; ':memory:' is accepted for throw-away use. */
  sqliteFile?: string;
  poolSize?: number;
}

export function openDatabase(opts: DatabaseOptions): Database {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
    // A dropped connection must not crash the process; the next query reports the failure.
    pool.on('error', () => {});
    // Nor may one dropped while checked out (terminated backend, restart): without a listener the
    // client's 'error' event would be unhandled and kill the process. The query itself still fails.
    pool.on('connect', (client) => client.on('error', () => {}));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  const file = opts.sqliteFile ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/**
 * Kysely prepares every query it runs, and with better-sqlite3 preparing costs more than running
 * most of our queries (the profile of the read path). The machinery builds a bounded set of SQL
 * texts, so each is prepared once per connection. Statements run synchronously, never overlapping.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = statements.get(text);
      if (!stmt) {
        if (statements.size >= 2000) statements.clear();
        stmt = sqlite.prepare(text);
        statements.set(text, stmt);
      }
      return stmt;
    },
  };
}

/** Opens the database the configuration names and applies every pending migration. */
export async function connect(opts: DatabaseOptions): Promise<Database> {
  const database = openDatabase(opts);
  try {
    await migrateToLatest(database);
  } catch (err) {
    await database.close();
    throw err;
  }
  return database;
}
