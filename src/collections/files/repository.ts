import type { Executor } from '../../db/runner.js';

/** The form submissions (PRODUCT §17) that name a file of the account: while any does, it stays as it is. */
export async function submissionsNaming(db: Executor, accountId: number, fileId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('form_submission_files')
    .select('submission_id')
    .where('account_id', '=', accountId)
    .where('file_id', '=', fileId)
    .orderBy('submission_id')
    .limit(6)
    .execute();
  return rows.map((r) => r.submission_id);
}
