import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { SQLITE } from './dialect.js';
import type { Database, DatabaseOptions } from './index.js';
import { attach, committed, newShared, ONE_ROW, type Bound, type Direct, type Executor } from './runner.js';
import type { DB } from './types.js';
import { kyselyLog, timed } from './observe.js';
import { lowerText } from './text.js';
import { isPeriod, periodKey, type DateSource } from '../time/period.js';

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
/** The main connection's page cache, in KiB (negative: a size, not a number of pages). */
const CACHE_KIB = -4096;
/** A snapshot's connection's page cache (an export's one pass over the account), in KiB. */
const SNAPSHOT_CACHE_KIB = -1024;

/** Embedded SQLite: one connection, WAL mode, statements run synchronously (src/db/runner.ts). */
export function openSqlite(opts: DatabaseOptions): Database {
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
  // The page cache: 4 MiB instead of better-sqlite3's 16 MB, which one scan of a large table (W2's
  // `~` over 100,000 jobs) filled and kept for the life of the process. Pages it no longer holds
  // come from the operating system's cache by a read.
  sqlite.pragma(`cache_size = ${CACHE_KIB}`);
  registerFunctions(sqlite);
  const checkpointer =
    opts.backgroundCheckpoints && file !== ':memory:'
      ? startCheckpointer(sqlite, file, opts.statisticsEveryMs ?? STATISTICS_EVERY_MS)
      : undefined;
  const statements = withStatementCache(sqlite, checkpointer);
  const db = new Kysely<DB>({
    dialect: new SqliteDialect({ database: statements }),
    log: kyselyLog('sqlite', opts.observe),
  });
  // The direct runner's statements are its own, apart from Kysely's (which read objects): those
  // with a row maker stay in raw mode, so a run is one call into better-sqlite3, not three.
  const direct = new Map<string, DirectStatement>();
  const runNow = (q: Bound<unknown>) => {
    let d = direct.get(q.sql);
    if (!d) {
      if (direct.size >= 2000) direct.clear();
      direct.set(q.sql, (d = directStatement(sqlite.prepare(q.sql))));
    }
    const params = q.parameters as unknown[];
    if (!d.reader) {
      d.stmt.run(params);
      return [];
    }
    const rows = d.oneRow && q[ONE_ROW] ? oneRow(d.stmt.get(params)) : d.stmt.all(params);
    return d.make ? (rows as unknown[][]).map(d.make) : rows;
  };
  const observe = opts.observe;
  // The direct runner bypasses Kysely's executor and so its `log`: it is timed here instead.
  const withTiming = (fn: Direct): Direct =>
    observe ? timed(fn, (q, seconds, failed) => observe('sqlite', seconds, failed, q.sql)) : fn;
  const shared = newShared(SQLITE);
  // Outside a transaction a statement runs at once unless a transaction is open (it then waits its
  // turn through Kysely's mutex); the transaction's own connection always runs at once.
  attach(db, shared, { direct: withTiming((q) => (sqlite.inTransaction ? undefined : runNow(q))) });
  const inTransaction = withTiming(runNow);
  return {
    db,
    dialect: SQLITE,
    // BEGIN IMMEDIATE takes the write lock up front, so writers of other processes wait on
    // busy_timeout instead of failing mid-transaction.
    transaction: <T>(fn: (tx: Executor) => Promise<T>) =>
      db.connection().execute(async (conn) => {
        attach(conn, shared, { direct: inTransaction, transaction: true });
        await sql`begin immediate`.execute(conn);
        try {
          const result = await fn(conn);
          await sql`commit`.execute(conn);
          committed(conn);
          return result;
        } catch (err) {
          await sql`rollback`.execute(conn);
          throw err;
        }
      }),
    // A read of one snapshot on a connection of its own (WAL: it neither waits for nor holds up the
    // server's writers, and the main connection stays free for other requests meanwhile).
    snapshot: async <T>(fn: (tx: Executor) => Promise<T>) => {
      if (file === ':memory:')
        return db.connection().execute(async (conn) => {
          attach(conn, shared, { direct: inTransaction, transaction: true });
          return fn(conn);
        });
      const reader = new Driver(file, { readonly: true, timeout: BUSY_TIMEOUT_MS });
      // Its own page cache kept small: the export reads each page once, and better-sqlite3's
      // 16 MB default filled during it and stayed in the server's RSS to its end.
      reader.pragma(`cache_size = ${SNAPSHOT_CACHE_KIB}`);
      registerFunctions(reader);
      const rdb = new Kysely<DB>({ dialect: new SqliteDialect({ database: reader }) });
      try {
        return await rdb.connection().execute(async (conn) => {
          attach(conn, newShared(SQLITE), { transaction: true });
          await sql`begin`.execute(conn);
          try {
            return await fn(conn);
          } finally {
            await sql`rollback`.execute(conn);
          }
        });
      } finally {
        await rdb.destroy();
      }
    },
    async close() {
      await db.destroy();
      await statements.closed();
    },
  };
}

/** The functions SQLite lacks, registered on every connection the server opens. */
function registerFunctions(db: SQLite.Database): void {
  // `~` lowers text as PostgreSQL's lower() does, over all of Unicode (src/db/text.ts).
  db.function('fsm_lower', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? lowerText(s) : s));
  // A summary's date periods in the account's zone, and a date-time text's instant (PRODUCT §19):
  // SQLite has no time zones, so these run in the process, inside the one GROUP BY statement.
  db.function(
    'fsm_period',
    { deterministic: true },
    (period: unknown, value: unknown, source: unknown, zone: unknown) =>
      typeof period === 'string' && isPeriod(period)
        ? periodKey(period, value, source as DateSource, String(zone))
        : null,
  );
  db.function('fsm_instant', { deterministic: true }, (text: unknown) => {
    const ms = typeof text === 'string' ? Date.parse(text) : NaN;
    return Number.isFinite(ms) ? ms : null;
  });
}

const oneRow = (row: unknown) => (row === undefined ? [] : [row]);

interface DirectStatement {
  stmt: SQLite.Statement;
  reader: boolean;
  /** A read may stop at its first row (better-sqlite3 `get`): never a write (see ONE_ROW). */
  oneRow: boolean;
  make: RowMaker | null;
}

/**
 * A statement of the direct runner. Rows come as arrays, made into objects by a function compiled
 * for the statement's columns: cheaper than better-sqlite3 setting each property (W3 +7–16 %,
 * docs/performance.md).
 */
function directStatement(stmt: SQLite.Statement): DirectStatement {
  const make = stmt.reader ? rowMaker(stmt) : null;
  if (make) stmt.raw(true);
  return { stmt, reader: stmt.reader, oneRow: stmt.readonly, make };
}

type RowMaker = (row: unknown[]) => Record<string, unknown>;
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
  const names = hasStar(stmt.source) ? [] : stmt.columns().map((c) => c.name);
  return names.length && !names.includes('__proto__')
    ? (new Function('r', `return {${names.map((n, i) => `${JSON.stringify(n)}: r[${i}]`).join(', ')}};`) as RowMaker)
    : null;
}

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
