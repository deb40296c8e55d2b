import { insertRows, type Executor } from '../../db/runner.js';
import type { FormField } from '../../domain/forms/template.js';

/** The form submissions' own queries (their rules ask these); every one names the account. */

export interface TemplateNow {
  fields: FormField[];
  version: number;
}

/** A template's current fields and version (undefined when the account has no such template). */
export async function templateNow(db: Executor, accountId: number, id: number): Promise<TemplateNow | undefined> {
  const row = await db
    .selectFrom('form_templates')
    .select(['fields', 'template_version'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && { fields: JSON.parse(row.fields) as FormField[], version: row.template_version };
}

/** The files of the account among `ids`: their job, declared type and digest. */
export async function filesOf(db: Executor, accountId: number, ids: number[]) {
  if (!ids.length) return [];
  return db
    .selectFrom('files')
    .select(['id', 'job_id', 'mime_type', 'sha256'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
}

export async function visitJob(db: Executor, accountId: number, visitId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('visits')
    .select('job_id')
    .where('account_id', '=', accountId)
    .where('id', '=', visitId)
    .executeTakeFirst();
  return row?.job_id;
}

export async function submissionOf(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('form_submissions')
    .select(['template_id', 'job_id'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Records the files a submission names (the files collection then keeps them unchanged). */
export async function linkFiles(db: Executor, accountId: number, submissionId: number, fileIds: number[]) {
  if (!fileIds.length) return;
  await insertRows(
    db,
    'form_submission_files',
    fileIds.map((file_id) => ({ account_id: accountId, submission_id: submissionId, file_id })),
  );
}
