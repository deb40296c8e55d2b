import type { Expression, SqlBool } from 'kysely';
import { remembered } from '../../db/memo.js';
import { execute, query, slot, untyped, type Executor } from '../../db/runner.js';
import { rowCount, rowCountValue, rowVersion } from '../../db/counted.js';
import type { Caller, Collection, EB } from './collection.js';
import type { ListQuery } from './modifiers.js';
import { elsewhereTables, readsElsewhere } from './filter.js';

/**
 * recordsCount, always exact.
 * - Unfiltered lists of every row in the account read the count the triggers of src/db/counted.ts keep.
 * - Filtered lists count their rows, and the count is remembered under the table's change version
 *   (src/db/memo.ts). Lists under 'own' access are remembered only where the policy names the
 *   tables their scope reads (`ownReads`: a Contractor's events follow their visits), under those
 *   tables' versions too; other scopes' changes the version would miss.
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
  // Under 'own', the scope reads the tables its policy names (ownReads); else it is not remembered.
  const ownReads = access === 'all' ? [] : c.policy.ownReads;
  if (!ownReads || !c.counted) return Number((await execute<{ n: number }>(db, counted(false)))[0].n);
  // A count over other tables' rows too (the scope's, or `client.name ~ …`) is remembered under
  // their versions as well (src/db/memo.ts `also`).
  const through = q.where && readsElsewhere(c, q.where) ? elsewhereTables(c, q.where) : [];
  if (!through) return Number((await execute<{ n: number }>(db, counted(false)))[0].n);
  const compiled = counted(false).compile();
  return remembered(
    db,
    c.table,
    ctx.accountId,
    `count|${compiled.sql}|${JSON.stringify(compiled.parameters)}`,
    async () => {
      // The count and the version in one statement, so both come from one snapshot.
      const [row] = await execute<{ n: number; v: number | null }>(db, counted(true));
      return { value: Number(row.n), version: row.v === null ? undefined : Number(row.v) };
    },
    () => 16,
    [...new Set([...ownReads, ...through])],
  );
}
