import { dialectOf, execute, type Executor } from '../../db/runner.js';

/**
 * Crew time (PRODUCT §11): one user's timesheet entries never overlap. Every write that adds or
 * moves an entry (a timesheet write, a visit's check-in or check-out) first locks the users whose
 * entries it changes, in id order, inside its transaction, before any of their entries (one lock
 * order: a visit, then its user's time, then the entries; timesheets' `lockFirst`), and only then
 * looks for overlaps: a second writer for the same user waits for the first to commit and then
 * sees its entry. PostgreSQL: the users'
 * rows `FOR NO KEY UPDATE` (an insert referencing the row takes only `KEY SHARE`, so it never waits
 * on this; Citus keeps both on the account's shard). SQLite runs writers one at a time.
 */
export async function lockUsersTime(db: Executor, accountId: number, userIds: number[]): Promise<void> {
  const dialect = dialectOf(db);
  if (dialect.serialWriters || !userIds.length) return;
  const ids = [...new Set(userIds)].sort((x, y) => x - y);
  await execute(
    db,
    db
      .selectFrom('users')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .orderBy('id')
      .modifyEnd(dialect.lockClause('no key update')),
  );
}

/**
 * The user's live entries that overlap `[start, end)` (end null: running, reaching into the
 * future), other than `except`. An entry may start when another ends.
 */
export async function overlappingEntries(
  db: Executor,
  accountId: number,
  userId: number,
  start: number,
  end: number | null,
  except?: number,
): Promise<number[]> {
  let q = db
    .selectFrom('timesheets')
    .select('id')
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where('deleted', '=', 0)
    .where((eb) => eb.or([eb('end_time', 'is', null), eb('end_time', '>', start)]));
  if (end !== null) q = q.where('start_time', '<', end);
  if (except !== undefined) q = q.where('id', '!=', except);
  return (await q.execute()).map((r) => r.id);
}
