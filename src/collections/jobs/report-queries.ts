import type { Executor } from '../../db/runner.js';

/** What the job report prints (PRODUCT §17), read in the caller's account: the jobs collection's own queries. */

const name = (first: string | null, last: string | null) => [first, last].filter(Boolean).join(' ') || 'Unknown user';

export async function reportJob(db: Executor, accountId: number, jobId: number) {
  return db
    .selectFrom('jobs')
    .leftJoin('sites', (j) =>
      j.onRef('sites.id', '=', 'jobs.site_id').onRef('sites.account_id', '=', 'jobs.account_id'),
    )
    .select(['jobs.id', 'jobs.client_id', 'jobs.reference', 'sites.name as site'])
    .where('jobs.account_id', '=', accountId)
    .where('jobs.id', '=', jobId)
    .executeTakeFirst();
}

export async function reportVisits(db: Executor, accountId: number, jobId: number) {
  const rows = await db
    .selectFrom('visits')
    .leftJoin('users', (j) =>
      j.onRef('users.id', '=', 'visits.user_id').onRef('users.account_id', '=', 'visits.account_id'),
    )
    .select([
      'visits.label',
      'visits.start_time',
      'visits.check_in_time',
      'visits.check_out_time',
      'visits.user_id',
      'users.first_name',
      'users.last_name',
    ])
    .where('visits.account_id', '=', accountId)
    .where('visits.job_id', '=', jobId)
    .where('visits.deleted', '=', 0)
    .orderBy('visits.start_time')
    .orderBy('visits.id')
    .execute();
  return rows.map((r) => ({
    label: r.label,
    user: r.user_id === null ? 'Unassigned' : name(r.first_name, r.last_name),
    start: Number(r.start_time),
    checkIn: r.check_in_time === null ? null : Number(r.check_in_time),
    checkOut: r.check_out_time === null ? null : Number(r.check_out_time),
  }));
}

/** The job's submissions that no other submission supersedes, oldest first, with their template. */
export async function reportSubmissions(db: Executor, accountId: number, jobId: number) {
  const rows = await db
    .selectFrom('form_submissions as s')
    .innerJoin('form_templates as t', (j) =>
      j.onRef('t.id', '=', 's.template_id').onRef('t.account_id', '=', 's.account_id'),
    )
    .leftJoin('users as u', (j) => j.onRef('u.id', '=', 's.submitted_by').onRef('u.account_id', '=', 's.account_id'))
    .select(['s.id', 's.answers', 's.submitted', 't.name', 't.fields', 'u.first_name', 'u.last_name'])
    .where('s.account_id', '=', accountId)
    .where('s.job_id', '=', jobId)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('form_submissions as later')
            .select('later.id')
            .where('later.account_id', '=', accountId)
            .whereRef('later.supersedes_id', '=', 's.id'),
        ),
      ),
    )
    .orderBy('s.id')
    .execute();
  return rows.map((r) => ({
    template: r.name,
    fields: r.fields,
    answers: r.answers,
    submitted: r.submitted,
    by: r.first_name === null ? 'a former user' : name(r.first_name, r.last_name),
  }));
}

export async function reportNotes(db: Executor, accountId: number, jobId: number) {
  const rows = await db
    .selectFrom('notes')
    .leftJoin('users', (j) =>
      j.onRef('users.id', '=', 'notes.author_id').onRef('users.account_id', '=', 'notes.account_id'),
    )
    .select(['notes.body', 'notes.created', 'users.first_name', 'users.last_name'])
    .where('notes.account_id', '=', accountId)
    .where('notes.job_id', '=', jobId)
    .where('notes.deleted', '=', 0)
    .orderBy('notes.created')
    .orderBy('notes.id')
    .execute();
  return rows.map((r) => ({
    body: r.body,
    created: Number(r.created),
    author: r.first_name === null ? 'a former user' : name(r.first_name, r.last_name),
  }));
}

/** Finished work entries on the job, summed per user. */
export async function reportWork(db: Executor, accountId: number, jobId: number) {
  const rows = await db
    .selectFrom('timesheets')
    .innerJoin('users', (j) =>
      j.onRef('users.id', '=', 'timesheets.user_id').onRef('users.account_id', '=', 'timesheets.account_id'),
    )
    .select(['users.first_name', 'users.last_name', 'timesheets.user_id'])
    .select((eb) => eb.fn.sum<number>('timesheets.duration').as('seconds'))
    .where('timesheets.account_id', '=', accountId)
    .where('timesheets.job_id', '=', jobId)
    .where('timesheets.kind', '=', 'work')
    .where('timesheets.deleted', '=', 0)
    .where('timesheets.duration', 'is not', null)
    .groupBy(['timesheets.user_id', 'users.first_name', 'users.last_name'])
    .orderBy('timesheets.user_id')
    .execute();
  return rows.map((r) => ({ user: name(r.first_name, r.last_name), seconds: Number(r.seconds) }));
}

/** The digests of files of the account by id (the photos and signatures the answers name). */
export async function fileDigests(db: Executor, accountId: number, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const rows = await db
    .selectFrom('files')
    .select(['id', 'sha256'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.sha256]));
}
