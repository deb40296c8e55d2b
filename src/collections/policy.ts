import { sql, type Expression, type SqlBool } from 'kysely';
import type { Executor } from '../db/runner.js';
import type { Caller, Collection, EB } from './machinery/collection.js';
import type { AssocField } from './machinery/fields.js';

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
 * Whether a collection's items follow a job (PRODUCT §2: "those jobs' notes, charges and files"):
 * it has a `job` association to `jobs`. Visits are not among them: a Contractor's visits are the
 * ones assigned to them, whatever the job.
 */
export function followsJob(c: Collection): boolean {
  const job = c.fields.job as AssocField | undefined;
  return c.name !== 'visits' && job?.kind === 'assoc' && job.target === 'jobs';
}

/**
 * The events a Contractor sees (PRODUCT §13), over the scope columns kept with each event
 * (migration 081), among the collections `readable` by the token and role: visits assigned to them
 * before or after the change; the jobs they can see now, and the items of the collections that
 * follow a job (followsJob: notes, files, charges…) on those jobs; their own user.
 */
export function contractorSeesEvent(
  caller: Caller,
  eb: EB,
  table: string,
  readable: readonly string[],
  jobScoped: readonly string[],
): Expression<SqlBool> {
  const terms: Expression<SqlBool>[] = [];
  if (readable.includes('visits'))
    terms.push(
      eb.and([
        eb(`${table}.collection`, '=', 'visits'),
        eb.or([eb(`${table}.scope_user_id`, '=', caller.userId), eb(`${table}.scope_old_user_id`, '=', caller.userId)]),
      ]),
    );
  if (readable.includes('users'))
    terms.push(eb.and([eb(`${table}.collection`, '=', 'users'), eb(`${table}.item_id`, '=', caller.userId)]));
  const followers = jobScoped.filter((n) => readable.includes(n));
  if (followers.length)
    terms.push(eb.and([eb(`${table}.collection`, 'in', followers), seesJob(caller, eb, `${table}.scope_job_id`)]));
  return terms.length ? eb.or(terms) : sql<SqlBool>`1 = 0`;
}
