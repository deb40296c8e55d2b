import type { Expression, SqlBool } from 'kysely';
import { remembered, versionNow } from '../../db/memo.js';
import { execute, query, slot, untyped, type Executor } from '../../db/runner.js';
import { rowCount, rowCountValue, rowVersion } from '../../db/counted.js';
import type { Caller, Collection, EB } from './collection.js';
import type { ListQuery } from './modifiers.js';
import { elsewhereTables, readsElsewhere } from './filter.js';

/**
 * recordsCount, always exact.
 * - Unfiltered lists of every row in the account read the count the triggers of src/db/counted.ts keep.
 * - Filtered lists count their rows, and the count is remembered under the table's change version
 *   (src/db/memo.ts). Lists under 'own' access are not remembered: their scope reads other tables
 *   (a contractor's jobs are those with their visits), whose changes the version misses.
 */
export const keptCount = (c: Collection, q: ListQuery, access: 'all' | 'own'): boolean =>
  access === 'all' && !!c.counted && !q.where && !q.near && !q.search?.length;

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
  if (keptCount(c, q, access)) {
    const [row] = await query<{ value: number }>(
      db,
      `counter|${c.table}`,
      () => rowCount(db, c.table, slot('account')),
      { account: ctx.accountId },
      { oneRow: true },
    );
    return Number(row?.value ?? 0);
  }
  const counted = (version: boolean) =>
    untyped(db)
      .selectFrom(c.table)
      .select((eb) => [
        eb.fn.countAll<number>().as('n'),
        ...(version ? [rowVersion(db, c.table, ctx.accountId).as('v')] : []),
      ])
      .where(where);
  if (access !== 'all' || !c.counted) return Number((await execute<{ n: number }>(db, counted(false)))[0].n);
  // A count over another table's rows too (`client.name ~ …`) is remembered under that table's
  // version as well, read before counting: while it has not moved, nothing the count read there
  // changed (versions only grow, so a count made after a later change is never asked for again).
  let elsewhere = '';
  if (q.where && readsElsewhere(c, q.where)) {
    const tables = elsewhereTables(c, q.where);
    const versions = tables && (await Promise.all(tables.map((t) => versionNow(db, t, ctx.accountId))));
    if (!tables || !versions || versions.some((v) => v === undefined))
      return Number((await execute<{ n: number }>(db, counted(false)))[0].n);
    elsewhere = tables.map((t, i) => `|${t}@${versions[i]}`).join('');
  }
  const compiled = counted(false).compile();
  return remembered(
    db,
    c.table,
    ctx.accountId,
    `count|${compiled.sql}|${JSON.stringify(compiled.parameters)}${elsewhere}`,
    async () => {
      // The count and the version in one statement, so both come from one snapshot.
      const [row] = await execute<{ n: number; v: number | null }>(db, counted(true));
      return { value: Number(row.n), version: row.v === null ? undefined : Number(row.v) };
    },
    () => 16,
  );
}
