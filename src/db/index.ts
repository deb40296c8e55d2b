import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, type KyselyConfig } from 'kysely';
import type { DB } from './types.js';
import { migrateToLatest } from './migrate.js';
import { ONE_ROW, preparedTexts, registerDirect } from './compiled.js';
import { runNamed } from './described.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  close(): Promise<void>;
  /** PostgreSQL's connection pool, for its gauges (src/http/metrics.ts); none on SQLite. */
  pool?: pg.Pool;
  /**
   * SQLite: lets compiled queries on `conn` (the connection a transaction holds, src/db/tx.ts) run
   * directly, as they do outside transactions: the transaction owns the connection meanwhile.
   */
  bindDirect?(conn: Kysely<DB>): void;
}

/** Told of every statement's duration (and its SQL); the server passes the metrics' observer. */
export type QueryObserver = (dialect: Dialect, seconds: number, failed: boolean, sql: string) => void;

// int8 (counts, bigint columns) and numeric come back as strings from pg by default.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

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

/** Kysely's `log` hook, timing every statement that goes through Kysely's executor. */
const kyselyLog = (dialect: Dialect, observe: QueryObserver | undefined): KyselyConfig['log'] =>
  observe && ((event) => observe(dialect, event.queryDurationMillis / 1000, event.level === 'error', event.query.sql));

export function openDatabase(opts: DatabaseOptions): Database {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
    // A dropped connection must not crash the process; the next query reports the failure.
    pool.on('error', () => {});
    // Nor may one dropped while checked out (terminated backend, restart): without a listener the
    // client's 'error' event would be unhandled and kill the process. The query itself still fails.
    pool.on('connect', (client) => {
      client.on('error', () => {});
      withNamedStatements(client);
      // Queued before anything the pool's user sends on this connection.
      client.query(TAKE_SLOT).catch(() => {});
    });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: kyselyLog('postgres', opts.observe) });
    return { db, dialect: 'postgres', close: () => db.destroy(), pool };
  }
  const file = opts.sqliteFile ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  // Loaded only for SQLite: a PostgreSQL process does not carry the native module (~8 MB of RSS).
  const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof SQLite;
  const sqlite = new Driver(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  // Temporary files in memory: a multi-row write in a transaction needs a statement journal, which
  // SQLite otherwise creates and unlinks as a file (four syscalls and its writes) every few writes.
  sqlite.pragma('temp_store = MEMORY');
  const checkpointer =
    opts.backgroundCheckpoints && file !== ':memory:'
      ? startCheckpointer(sqlite, file, opts.statisticsEveryMs ?? STATISTICS_EVERY_MS)
      : undefined;
  const statements = withStatementCache(sqlite, checkpointer);
  const db = new Kysely<DB>({
    dialect: new SqliteDialect({ database: statements }),
    log: kyselyLog('sqlite', opts.observe),
  });
  type Query = Parameters<Parameters<typeof registerDirect>[1]>[0];
  const runNow = (q: Query) => {
    const stmt = statements.prepare(q.sql);
    if (!stmt.reader) {
      stmt.run(q.parameters as unknown[]);
      return [];
    }
    // Rows as arrays, made into objects by a function compiled for the statement's columns: cheaper
    // than better-sqlite3 setting each property (W3 +7–16 %, docs/performance.md). The statement
    // is shared with Kysely's path, which reads objects: raw mode only for this call.
    const make = rowMaker(stmt);
    if (make) stmt.raw(true);
    try {
      const rows =
        stmt.readonly && q[ONE_ROW] ? oneRow(stmt.get(q.parameters as unknown[])) : stmt.all(q.parameters as unknown[]);
      return make ? (rows as unknown[][]).map(make) : rows;
    } finally {
      if (make) stmt.raw(false);
    }
  };
  // Outside a transaction a statement runs at once unless a transaction is open (it then waits its
  // turn through Kysely's mutex); the transaction's own connection always runs at once.
  const direct = (q: Query) => (sqlite.inTransaction ? undefined : runNow(q));
  // The direct runner bypasses Kysely's executor and so its `log`: it is timed here instead.
  const observe = opts.observe;
  const withTiming = (fn: (q: Query) => unknown[] | undefined) =>
    observe ? timed(fn, (q, seconds, failed) => observe('sqlite', seconds, failed, q.sql)) : fn;
  registerDirect(db, withTiming(direct));
  const inTransaction = withTiming(runNow);
  const close = async () => {
    await db.destroy();
    await statements.closed();
  };
  return { db, dialect: 'sqlite', close, bindDirect: (conn) => registerDirect(conn, inTransaction) };
}

const oneRow = (row: unknown) => (row === undefined ? [] : [row]);

type RowMaker = (row: unknown[]) => Record<string, unknown>;
const rowMakers = new WeakMap<SQLite.Statement, RowMaker | null>();
/**
 * A `*` other than `count(*)` (a select list's `*` or `t.*`, or a product, which costs nothing to
 * exclude): a `*`'s columns could change when SQLite recompiles the statement after a schema change.
 */
const hasStar = (text: string) => text.replace(/count\(\*\)/gi, '').includes('*');

/**
 * The function making an object of a row read as an array, for a statement whose SQL names every
 * column it returns (so a recompiled statement returns the same ones, or fails); none otherwise.
 * Keys are string literals (JSON), with last-wins for repeated names as better-sqlite3 does;
 * `__proto__` would set the prototype in a literal, so such a statement keeps objects.
 */
function rowMaker(stmt: SQLite.Statement): RowMaker | null {
  let make = rowMakers.get(stmt);
  if (make === undefined) {
    const names = hasStar(stmt.source) ? [] : stmt.columns().map((c) => c.name);
    make =
      names.length && !names.includes('__proto__')
        ? (new Function(
            'r',
            `return {${names.map((n, i) => `${JSON.stringify(n)}: r[${i}]`).join(', ')}};`,
          ) as RowMaker)
        : null;
    rowMakers.set(stmt, make);
  }
  return make;
}

/** Times a direct run; `undefined` means "not run here" (a transaction is open): Kysely runs and times it. */
function timed<A, R>(
  fn: (a: A) => R | undefined,
  observe: (a: A, seconds: number, failed: boolean) => void,
): (a: A) => R | undefined {
  return (a) => {
    const start = performance.now();
    let r: R | undefined;
    try {
      r = fn(a);
    } catch (err) {
      observe(a, (performance.now() - start) / 1000, true);
      throw err;
    }
    if (r !== undefined) observe(a, (performance.now() - start) / 1000, false);
    return r;
  };
}

/** How long a statement waits for another process's write lock. */
const BUSY_TIMEOUT_MS = 5000;

/** How often the checkpointer looks for new commits (src/db/checkpointer.ts). */
const CHECKPOINT_EVERY_MS = 250;
/** How often it checks whether a table grew or shrank past its planner statistics. */
const STATISTICS_EVERY_MS = 10_000;

/**
 * The connection's own checkpoints while the thread runs: only past this many pages of WAL (16 MB
 * of 4 KB pages), a safety net the thread normally keeps the WAL far below.
 */
const NET_PAGES = 4096;

/** Starts the checkpoint thread and moves the connection's own checkpoints out to the safety net. */
function startCheckpointer(
  sqlite: SQLite.Database,
  file: string,
  statisticsEveryMs: number,
): { stop(): Promise<void> } {
  const worker = new Worker(new URL('./checkpointer.js', import.meta.url), {
    workerData: { file: path.resolve(file), everyMs: CHECKPOINT_EVERY_MS, statisticsEveryMs },
  });
  worker.unref();
  // New planner statistics (the thread ran ANALYZE): this connection loads them, which makes its
  // prepared statements plan again. Loading takes the write lock for a moment: never inside a
  // transaction, and never waiting for another process's (the event loop would stop); then later.
  const loadStatistics = (tries = 20) => {
    if (!sqlite.open || tries === 0) return;
    const later = () => void setTimeout(() => loadStatistics(tries - 1), 50).unref();
    if (sqlite.inTransaction) return later();
    sqlite.pragma('busy_timeout = 0');
    try {
      sqlite.exec('analyze sqlite_schema');
    } catch {
      later();
    } finally {
      sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  };
  worker.on('message', (m) => m === 'statistics' && loadStatistics());
  let failed = false;
  // A thread that cannot run: SQLite's automatic checkpoints, as before.
  worker.on('error', () => {
    failed = true;
    sqlite.pragma('wal_autocheckpoint = 1000');
  });
  sqlite.pragma(`wal_autocheckpoint = ${NET_PAGES}`);
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (failed) return resolve();
        const done = () => {
          clearTimeout(timeout);
          resolve();
        };
        const timeout = setTimeout(() => void worker.terminate().then(done, done), 5_000);
        worker.on('message', (m) => m === 'closed' && void worker.terminate().then(done, done));
        worker.once('exit', done);
        worker.postMessage('close');
      }),
  };
}

/**
 * Kysely prepares every query it runs, and with better-sqlite3 preparing costs more than running
 * most of our queries (the profile of the read path). The machinery builds a bounded set of SQL
 * texts, so each is prepared once per connection. Statements run synchronously, never overlapping.
 */
function withStatementCache(sqlite: SQLite.Database, checkpointer?: { stop(): Promise<void> }) {
  const statements = new Map<string, SQLite.Statement>();
  let closing: Promise<void> | undefined;
  return {
    // The checkpointer's connection closes first: the last connection to close checkpoints the
    // WAL into the database file and removes it. (Kysely does not wait for this: see `closed`.)
    close() {
      closing ??= (async () => {
        await checkpointer?.stop();
        sqlite.close();
      })();
    },
    closed: () => closing ?? Promise.resolve(),
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

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it on every execution; with a
 * 4-table join for the token lookup on each request, that was most of W3's database time. The
 * queries built once (src/db/compiled.ts: token lookup, rate-limit upsert, unfiltered lists, items
 * by id, kept counts) are given a name per SQL text, so each connection parses them once, as the
 * floor's named statements are. The rest are sent as before.
 */
const statementNames = new Map<string, string>();

/**
 * The connection's row-count slot (src/db/counted.ts, migration 012): the lowest number no other
 * live connection to the database holds, kept for the connection's life by a session advisory lock
 * (released when it closes), and told to the count triggers as the session setting `fsm.slot`.
 * Two connections never share a slot, so two transactions never wait on each other's row counts.
 */
const TAKE_SLOT = `select set_config('fsm.slot', (select n::text from generate_series(1, 10000) n
  where pg_try_advisory_lock(hashtext('fsm.slot'), n) limit 1), false)`;

function withNamedStatements(client: pg.PoolClient) {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    if (
      typeof text !== 'string' ||
      !Array.isArray(values) ||
      values.length === 0 ||
      callback !== undefined ||
      !preparedTexts.has(text)
    ) {
      return callback === undefined
        ? values === undefined
          ? query(text)
          : query(text, values)
        : query(text, values, callback);
    }
    let name = statementNames.get(text);
    if (name === undefined) statementNames.set(text, (name = `fsm${statementNames.size}`));
    return runNamed(query, { name, text, values });
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
