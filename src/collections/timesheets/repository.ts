import type { Executor } from '../../db/runner.js';

/** The job of a live visit of the account, or undefined. */
export async function visitJob(db: Executor, accountId: number, visitId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('visits')
    .select('job_id')
    .where('account_id', '=', accountId)
    .where('id', '=', visitId)
    .where('deleted', '=', 0)
    .executeTakeFirst();
  return row?.job_id;
}

/** The users of stored entries (read without a lock: their time is locked next, then the entries). */
export async function entryUsers(db: Executor, accountId: number, ids: number[]): Promise<number[]> {
  const known = ids.filter((id) => id > 0);
  if (!known.length) return [];
  const rows = await db
    .selectFrom('timesheets')
    .select('user_id')
    .where('account_id', '=', accountId)
    .where('id', 'in', known)
    .execute();
  return rows.map((r) => r.user_id);
}
