import { sql, type Expression, type SqlBool } from 'kysely';
import { permissionFor, type Caller, type Collection, type EB } from './machinery/collection.js';
import { ApiError } from '../errors.js';
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

/**
 * The 'own' scopes a declaration names (`policy.own`), each written once: a collection's rows are
 * a Contractor's by their job, by their client, or by their user.
 */
export const byTheirJob = (caller: Caller, eb: EB, table: string): Expression<SqlBool> =>
  seesJob(caller, eb, `${table}.job_id`);
export const byTheirClient = (caller: Caller, eb: EB, table: string): Expression<SqlBool> =>
  seesClient(caller, eb, `${table}.client_id`);
export const byTheirUser = (caller: Caller, eb: EB, table: string): Expression<SqlBool> =>
  isCaller(caller, eb, `${table}.user_id`);

/**
 * Whether a Contractor sees a collection's events by its job (PRODUCT §13: "those jobs' notes,
 * charges and files", and §17's form submissions): the collections whose declared 'own' scope is
 * `byTheirJob`, through their `job` association to `jobs`. Not every collection with a job follows
 * it: a Contractor's visits are the ones assigned to them, and their timesheets their own (PRODUCT
 * §11), whatever the job.
 */
export function followsJob(c: Collection): boolean {
  const job = c.fields.job as AssocField | undefined;
  return c.policy.own === byTheirJob && job?.kind === 'assoc' && job.target === 'jobs';
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
  // Each term an index of migration 091 answers (account, member, id), so a Contractor's page and
  // count read their own events, not the account's: literals where a partial index names them.
  const terms: Expression<SqlBool>[] = [];
  const of = (name: string) => eb(`${table}.collection`, '=', sql.lit(name));
  if (readable.includes('visits'))
    terms.push(
      eb.and([of('visits'), eb(`${table}.scope_user_id`, '=', caller.userId)]),
      eb.and([of('visits'), eb(`${table}.scope_old_user_id`, '=', caller.userId)]),
    );
  if (readable.includes('users')) terms.push(eb.and([of('users'), eb(`${table}.item_id`, '=', caller.userId)]));
  const followers = jobScoped.filter((n) => readable.includes(n));
  if (followers.length)
    terms.push(
      eb.and([
        eb(`${table}.collection`, 'in', followers),
        eb(
          `${table}.scope_job_id`,
          'in',
          eb
            .selectFrom('visits')
            .select('visits.job_id')
            .where('visits.account_id', '=', caller.accountId)
            .where('visits.user_id', '=', caller.userId),
        ),
      ]),
    );
  return terms.length ? eb.or(terms) : sql<SqlBool>`1 = 0`;
}

/**
 * Who may take the whole account away with `GET /export` (PRODUCT §19): an Administrator whose token
 * holds the read permission of every exported collection. Throws the 403 that says what is missing.
 */
export function checkMayExport(caller: Caller, collections: readonly Collection[]): void {
  for (const c of collections) {
    const need = permissionFor(c, 'read');
    if (!caller.permissions.has(need)) throw new ApiError('permissionMissing', `${need} (an export needs every .read)`);
  }
  if (caller.role !== 'administrator') throw new ApiError('roleForbids', 'only an Administrator exports the account');
}
