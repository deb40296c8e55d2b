import type { CompiledQuery, Kysely } from 'kysely';

/**
 * Queries built once and compiled once, then run with new parameters. Building and compiling a
 * Kysely tree cost more than running the query itself on the read path (profile of W1/W3: ~13 % of
 * CPU in Kysely's builders and compiler), yet the hot queries differ per request only in their
 * values. A query is built with `slot(name)` where a value goes and compiled; `bind` puts the values in.
 */
const SLOT = '\u0000slot:';

/** A placeholder value, replaced by `values[name]` when the query is bound. */
export const slot = <T = string>(name: string): T => `${SLOT}${name}` as unknown as T;

export interface Prepared<R> {
  bind(values: Record<string, unknown>): CompiledQuery<R>;
}

/**
 * Marks a read that returns at most one row (by a unique key): SQLite then steps it once
 * (better-sqlite3 `get`) instead of stepping on to the end. Only for reads: a write stopped before
 * SQLITE_DONE commits when it is reset, but SQLite runs its WAL auto-checkpoint only on DONE, so
 * the WAL would grow without bound (measured: 5,000 upserts left 5,002 frames, `all` kept 1,000).
 */
export const ONE_ROW = Symbol('one row');
type Bound<R> = CompiledQuery<R> & { [ONE_ROW]?: true };

/**
 * The SQL texts built here: fixed shapes whose values only fill parameters, so PostgreSQL may keep
 * one plan for them (src/db/index.ts names these statements). Queries with a client's `where` are
 * planned with their values each time: the best plan for `title ~ "pump"` depends on the pattern.
 */
export const preparedTexts = new Set<string>();

// Compiled SQL depends only on the dialect, which a Kysely instance and its transactions share
// through the executor's adapter; texts are keyed by what decides their shape.
const caches = new WeakMap<object, Map<string, Prepared<unknown>>>();
const LIMIT = 1000;

export function prepared<R>(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  key: string,
  build: () => CompiledQuery<R>,
  opts: { oneRow?: boolean } = {},
): Prepared<R> {
  const adapter = db.getExecutor().adapter;
  let cache = caches.get(adapter);
  if (!cache) caches.set(adapter, (cache = new Map()));
  let p = cache.get(key) as Prepared<R> | undefined;
  if (!p) {
    const compiled = build();
    if (preparedTexts.size < LIMIT * 2) preparedTexts.add(compiled.sql);
    const names = compiled.parameters.map((v) =>
      typeof v === 'string' && v.startsWith(SLOT) ? v.slice(SLOT.length) : undefined,
    );
    p = {
      bind: (values): Bound<R> => ({
        ...compiled,
        parameters: compiled.parameters.map((v, i) => (names[i] === undefined ? v : values[names[i]!])),
        ...(opts.oneRow ? { [ONE_ROW]: true as const } : {}),
      }),
    };
    // Keys are bounded by the declarations (collections x projections x sizes); a client asking for
    // many different projections only makes us start over.
    if (cache.size >= LIMIT) cache.clear();
    cache.set(key, p as Prepared<unknown>);
  }
  return p;
}

/**
 * SQLite: the statements run synchronously, so going through Kysely's executor (connection
 * provider, mutex, result transforms: several promises per query) cost more than some of our
 * queries themselves. A database registers a direct runner for itself; it answers undefined while a
 * transaction is open on the connection (the statement must then wait its turn, as Kysely's mutex
 * makes it), and transactions and connection-bound executors are other instances, never registered.
 */
type Direct = (q: CompiledQuery & { [ONE_ROW]?: true }) => unknown[] | undefined;
const directs = new WeakMap<object, Direct>();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const registerDirect = (db: Kysely<any>, direct: Direct) => directs.set(db, direct);

/** Runs a compiled query: directly when the database allows it, else through Kysely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function run<R>(db: Kysely<any>, q: CompiledQuery<R>): Promise<R[]> {
  const rows = directs.get(db)?.(q);
  return (rows ?? (await db.executeQuery(q)).rows) as R[];
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
 */
export async function insertRows<R = unknown>(
  db: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  table: string,
  rows: Record<string, unknown>[],
  returning: string[] | '*' = [],
): Promise<R[]> {
  const cols = columnsOf(rows[0]);
  const back = returning === '*' ? '*' : returning.join(',');
  const q = prepared<R>(db, `insertRows|${table}|${cols.join(',')}|${rows.length}|${back}`, () => {
    const insert = db
      .insertInto(table)
      .values(rows.map((_, i) => Object.fromEntries(cols.map((k) => [k, slot(`${i}.${k}`)]))));
    return (
      returning === '*' ? insert.returningAll() : returning.length ? insert.returning(returning) : insert
    ).compile() as CompiledQuery<R>;
  });
  const values: Record<string, unknown> = {};
  rows.forEach((row, i) => cols.forEach((k) => (values[`${i}.${k}`] = row[k])));
  return run(db, q.bind(values));
}
