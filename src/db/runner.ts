import type { CompiledQuery, Compilable, Kysely, Transaction } from 'kysely';
import type { DialectStrategy } from './dialect.js';
import type { DB } from './types.js';

/**
 * The query runner: how the rest of the code runs SQL. The domain asks for rows; the runner
 * decides how to get them. Its tricks, each measured (docs/performance.md), stay behind it:
 *
 * - Statements of a fixed shape are built and compiled once, keyed by what decides their shape,
 *   and run with new values (`query`): building and compiling a Kysely tree cost more than
 *   running the statement on the read path (~13 % of CPU on W1/W3).
 * - SQLite: statements run synchronously on the connection, past Kysely's executor (connection
 *   provider, mutex, result transforms: several promises per statement), and rows come as arrays
 *   made into objects by a function compiled per statement (src/db/sqlite.ts).
 * - PostgreSQL: those statements are named, so each connection parses and plans them once, and
 *   asks for their row description once (src/db/postgres.ts, src/db/described.ts).
 *
 * Every Kysely instance the code runs on (the database, a transaction, a connection) is attached
 * to its database's handle: its dialect, its compiled statements, and on SQLite its direct runner.
 */
export type Executor = Kysely<DB> | Transaction<DB>;

/** Runs a compiled statement at once, or answers undefined: "not now" (Kysely then runs it in its turn). */
export type Direct = (q: Bound<unknown>) => unknown[] | undefined;

/** What one database shares across its connections and transactions. */
export interface Shared {
  readonly dialect: DialectStrategy;
  readonly compiled: Map<string, Prepared<unknown>>;
  /** Per-process caches kept beside the database (src/db/memo.ts), by name. */
  readonly caches: Map<string, unknown>;
  /**
   * Told after each commit in this process that recorded events, with their accounts: live
   * streams dispatch at once where the database cannot notify (src/http/event-stream.ts).
   */
  readonly eventsCommitted: Set<(accounts: ReadonlySet<number>) => void>;
}

interface Handle {
  shared: Shared;
  direct?: Direct;
  /** A transaction's executor (SQLite's is a connection-bound Kysely, which Kysely does not call one). */
  transaction: boolean;
  /** The accounts whose events this transaction recorded. */
  recorded?: Set<number>;
}

const handles = new WeakMap<object, Handle>();

export function newShared(dialect: DialectStrategy): Shared {
  return { dialect, compiled: new Map(), caches: new Map(), eventsCommitted: new Set() };
}

/** Attaches a Kysely instance (the database, or a transaction or connection of it) to its database. */
export function attach(db: object, shared: Shared, opts: { direct?: Direct; transaction?: boolean } = {}): void {
  handles.set(db, { shared, direct: opts.direct, transaction: opts.transaction ?? false });
}

function handleOf(db: object): Handle {
  const h = handles.get(db);
  if (!h) throw new Error('a query ran on a Kysely instance that no database attached (src/db/runner.ts)');
  return h;
}

/** The database an executor belongs to: its dialect and shared state. */
export const sharedOf = (db: object): Shared => handleOf(db).shared;

/** Whether an executor runs inside a write transaction (what it reads may still roll back). */
export const inTransaction = (db: object): boolean => handleOf(db).transaction;

/** Notes, inside a transaction, that it recorded events of an account (told after its commit). */
export function eventsRecorded(tx: object, account: number): void {
  const h = handleOf(tx);
  if (h.transaction) (h.recorded ??= new Set()).add(account);
}

/** Called by each dialect's transaction once it committed: tells who listens what it recorded. */
export function committed(tx: object): void {
  const h = handleOf(tx);
  if (h.recorded?.size) for (const told of h.shared.eventsCommitted) told(h.recorded);
  h.recorded = undefined;
}

/** The dialect of the database an executor belongs to. */
export const dialectOf = (db: object): DialectStrategy => handleOf(db).shared.dialect;

const SLOT = '\u0000slot:';

/** A placeholder value in a statement built once, replaced by `values[name]` on each run. */
export const slot = <T = string>(name: string): T => `${SLOT}${name}` as unknown as T;

/**
 * Marks a read that returns at most one row (by a unique key): SQLite steps it once (better-sqlite3
 * `get`). Only for reads: a write stopped before SQLITE_DONE commits when it is reset, but SQLite
 * runs its WAL auto-checkpoint only on DONE, so the WAL would grow without bound.
 */
export const ONE_ROW = Symbol('one row');
export type Bound<R> = CompiledQuery<R> & { [ONE_ROW]?: true };

interface Prepared<R> {
  compiled: CompiledQuery<R>;
  names: (string | undefined)[];
}

/**
 * The SQL texts of statements built once: fixed shapes whose values only fill parameters, which
 * PostgreSQL may keep one plan for (src/db/postgres.ts names them). Statements with a client's
 * `where` are planned with their values each time.
 */
export const preparedTexts = new Set<string>();
const LIMIT = 1000;

type Build<R> = () => Compilable<R> | CompiledQuery<R>;
const compile = <R>(b: Compilable<R> | CompiledQuery<R>): CompiledQuery<R> => ('compile' in b ? b.compile() : b);

/**
 * The rows of a statement of a fixed shape: `build` makes it with `slot(name)` where values go,
 * once per database and `key` (which must name everything that decides the shape); `values` fill
 * the slots on each run.
 */
export async function query<R>(
  db: object,
  key: string,
  build: Build<R>,
  values: Record<string, unknown>,
  opts: { oneRow?: boolean } = {},
): Promise<R[]> {
  const { shared, direct } = handleOf(db);
  let p = shared.compiled.get(key) as Prepared<R> | undefined;
  if (!p) {
    const compiled = compile(build());
    if (preparedTexts.size < LIMIT * 2) preparedTexts.add(compiled.sql);
    const names = compiled.parameters.map((v) =>
      typeof v === 'string' && v.startsWith(SLOT) ? v.slice(SLOT.length) : undefined,
    );
    p = { compiled, names };
    // Keys are bounded by the declarations (collections × projections × sizes); a client asking for
    // many different projections only makes us start over.
    if (shared.compiled.size >= LIMIT) shared.compiled.clear();
    shared.compiled.set(key, p as Prepared<unknown>);
  }
  const { compiled, names } = p;
  const bound: Bound<R> = {
    ...compiled,
    parameters: compiled.parameters.map((v, i) => (names[i] === undefined ? v : values[names[i]!])),
  };
  if (opts.oneRow) bound[ONE_ROW] = true;
  return run(db, direct, bound);
}

/** The rows of a statement built for this one call (its shape depends on a client's `where`). */
export async function execute<R>(db: object, q: Compilable<R> | CompiledQuery<R>): Promise<R[]> {
  return run(db, handleOf(db).direct, compile(q));
}

async function run<R>(db: object, direct: Direct | undefined, q: Bound<R>): Promise<R[]> {
  const rows = direct?.(q as Bound<unknown>);
  return (rows ?? (await (db as Kysely<DB>).executeQuery(q)).rows) as R[];
}

/** The columns a row sets (those with a value), in a stable order: they name its compiled statement. */
export const columnsOf = (row: Record<string, unknown>): string[] =>
  Object.keys(row)
    .filter((k) => row[k] !== undefined)
    .sort();

/**
 * Rows of one shape inserted by one statement, compiled once per table, columns (those the first
 * row sets), number of rows and columns returned: every write inserts its items and their events
 * this way, and building each statement through Kysely cost more than the database took to run it.
 * `skipConflictsOn`: the columns of a unique key whose refused rows are skipped (custom fields'
 * unique values: what is returned is what went in).
 *
 * In a transaction, more than SMALL_RUN rows go in runs of a power of two and one run of at most
 * SMALL_RUN (137 rows: 128 + 9), in order, so a table has at most SMALL_RUN + 6 statement shapes
 * per column set, not one per batch size up to 500: each shape is kept compiled here and prepared
 * by the database, and on SQLite a prepared insert of a few hundred rows holds about 400 KB of
 * native memory (docs/performance.md). Outside a transaction the rows go in by one statement.
 */
export async function insertRows<R = unknown>(
  db: Executor,
  table: string,
  rows: Record<string, unknown>[],
  returning: string[] | '*' = [],
  opts: { skipConflictsOn?: string[] } = {},
): Promise<R[]> {
  if (rows.length <= SMALL_RUN || !inTransaction(db)) return insertRun<R>(db, table, rows, returning, opts);
  const out: R[] = [];
  for (let at = 0; at < rows.length;) {
    const left = rows.length - at;
    const n = left <= SMALL_RUN ? left : 2 ** Math.floor(Math.log2(left));
    out.push(...(await insertRun<R>(db, table, rows.slice(at, at + n), returning, opts)));
    at += n;
  }
  return out;
}
const SMALL_RUN = 16;

async function insertRun<R>(
  db: Executor,
  table: string,
  rows: Record<string, unknown>[],
  returning: string[] | '*',
  opts: { skipConflictsOn?: string[] },
): Promise<R[]> {
  const cols = columnsOf(rows[0]);
  const back = returning === '*' ? '*' : returning.join(',');
  const skip = opts.skipConflictsOn;
  const values: Record<string, unknown> = {};
  rows.forEach((row, i) => cols.forEach((k) => (values[`${i}.${k}`] = row[k])));
  return query<R>(
    db,
    `insertRows|${table}|${cols.join(',')}|${rows.length}|${back}|${skip?.join(',') ?? ''}`,
    () => {
      const into = untyped(db)
        .insertInto(table)
        .values(rows.map((_, i) => Object.fromEntries(cols.map((k) => [k, slot(`${i}.${k}`)]))));
      // `skipConflictsOn`: a row that key refuses is not inserted (nor returned).
      const insert = skip ? into.onConflict((oc) => oc.columns(skip).doNothing()) : into;
      return (
        returning === '*' ? insert.returningAll() : returning.length ? insert.returning(returning) : insert
      ).compile() as CompiledQuery<R>;
    },
    values,
  );
}

/**
 * The collection machinery builds statements from declarations, on table names known only at run
 * time: it reaches tables through this, typed as any table. Code that names its tables uses the
 * typed executor.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const untyped = (db: Executor) => db as unknown as Kysely<any>;
