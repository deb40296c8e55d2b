import type { Expression, SqlBool } from 'kysely';
import { prepared, run, slot } from '../../db/compiled.js';
import { untyped, type Executor } from '../../db/tx.js';
import { rowCount, rowCountValue, rowVersion } from '../../db/counted.js';
import type { Caller, Collection, EB } from './collection.js';
import type { ListQuery } from './modifiers.js';

/**
 * recordsCount, always exact.
 * - Unfiltered lists of every row in the account read the count the triggers of src/db/counted.ts keep.
 * - Filtered lists count their rows, and remember the count under the table's change counter for
 *   the account (the sum of `row_counts.version` over the table's slots, moved by those triggers
 *   in the same transaction as every insert, update and delete). While the counter has not moved, no row of
 *   the table changed in the account, so the remembered count is still the true one. `~` has to
 *   look at every matching row (8 % of 100,000 jobs in W2): counting grew with the account, reading
 *   the counter does not. Lists under 'own' access are not remembered: their scope reads other
 *   tables (a contractor's jobs are those with their visits), whose changes the counter misses.
 */
/** Whether a list's count is the one the triggers keep: unfiltered, every row of the account. */
export const keptCount = (c: Collection, q: ListQuery, access: 'all' | 'own'): boolean =>
  access === 'all' && !!c.counted && !q.where;

/** The column a list's rows carry the kept count in (read.ts): a name no table has. */
export const KEPT_COUNT = 'fsm_kept_count';

/** The kept count as a scalar subquery, selected with a list's rows (one statement for both). */
export const keptCountColumn = (db: Executor, c: Collection, account: number) =>
  rowCountValue(db, c.table, account).as(KEPT_COUNT);

export async function countRows(
  db: Executor,
  c: Collection,
  ctx: Caller,
  q: ListQuery,
  access: 'all' | 'own',
  where: (eb: EB) => Expression<SqlBool>,
): Promise<number> {
  const kept = access === 'all' && !!c.counted;
  if (keptCount(c, q, access)) {
    const rows = await run(untyped(db), counterQuery(db, c.table).bind({ account: ctx.accountId }));
    return Number(rows[0]?.value ?? 0);
  }
  const count = untyped(db)
    .selectFrom(c.table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(where);
  // Inside a transaction the counter may carry an uncommitted bump, which a rollback could hand to
  // another change: only counts taken on the database itself are remembered (the API's lists).
  if (!kept || db.isTransaction) return Number((await count.executeTakeFirstOrThrow()).n);

  const compiled = count.compile();
  const key = `${ctx.accountId}\u0000${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  const cache = cacheOf(db);
  const remembered = cache.get(key);
  if (remembered) {
    const rows = await run(untyped(db), counterQuery(db, c.table).bind({ account: ctx.accountId }));
    if (rows[0] !== undefined && Number(rows[0].version) === remembered.version) return remembered.count;
  }
  // The count and the counter in one statement, so both come from one snapshot.
  const row = await untyped(db)
    .selectFrom(c.table)
    .select((eb) => [eb.fn.countAll<number>().as('n'), rowVersion(db, c.table, ctx.accountId).as('v')])
    .where(where)
    .executeTakeFirstOrThrow();
  const n = Number(row.n);
  if (row.v !== null && row.v !== undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, { version: Number(row.v), count: n });
  }
  return n;
}

const counterQuery = (db: Executor, table: string) =>
  prepared<{ value: number; version: number }>(
    untyped(db),
    `counter|${table}`,
    () => rowCount(db, table, slot('account')).compile(),
    { oneRow: true },
  );

// Per database (a Kysely instance and its transactions share the executor's adapter) and process;
// every process validates against the same counters, so workers never disagree.
const caches = new WeakMap<object, Map<string, { version: number; count: number }>>();
const CACHE_LIMIT = 1000;

function cacheOf(db: Executor) {
  const adapter = db.getExecutor().adapter;
  let cache = caches.get(adapter);
  if (!cache) caches.set(adapter, (cache = new Map()));
  return cache;
}
