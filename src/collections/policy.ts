import type { Expression, SqlBool } from 'kysely';
import type { Executor } from '../db/runner.js';
import type { Caller, EB } from './machinery/collection.js';

/**
 * The rules that span collections, written once: every collection whose rows follow a job, a
 * visit or a user asks here which of them a caller may see (PRODUCT §2). A collection's own
 * policy (`policy.own` of its declaration) combines these; nothing else repeats them.
 *
 * - A Contractor's visits are those assigned to them.
 * - "The jobs a Contractor can see" are the jobs with at least one visit assigned to them; their
 *   notes, files and charges follow the job.
 * - A Contractor's own rows of a user-keyed collection are those of their user.
 */

/** The rows whose `column` names a job the Contractor can see (a visit of it is assigned to them). */
export function seesJob(caller: Caller, eb: EB, jobColumn: string): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('visits')
      .select('visits.id')
      .whereRef('visits.job_id', '=', jobColumn)
      .where('visits.account_id', '=', caller.accountId)
      .where('visits.user_id', '=', caller.userId),
  );
}

/** Whether the Contractor can see the job (seesJob, for one id inside a write). */
export async function canSeeJob(db: Executor, caller: Caller, jobId: number): Promise<boolean> {
  const row = await db
    .selectFrom('visits')
    .select('id')
    .where('account_id', '=', caller.accountId)
    .where('job_id', '=', jobId)
    .where('user_id', '=', caller.userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The rows whose `column` names the caller's own user. */
export function isCaller(caller: Caller, eb: EB, userColumn: string): Expression<SqlBool> {
  return eb(userColumn, '=', caller.userId);
}

/**
 * The rows whose `column` names a client of a job the Contractor can see (PRODUCT §10: they read
 * the sites and contacts of those clients).
 */
export function seesClient(caller: Caller, eb: EB, clientColumn: string): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('jobs as seen_jobs')
      .select('seen_jobs.id')
      .whereRef('seen_jobs.client_id', '=', clientColumn)
      .where('seen_jobs.account_id', '=', caller.accountId)
      .where(seesJob(caller, eb, 'seen_jobs.id')),
  );
}
