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
