import { rowVersion } from '../../db/counted.js';
import { dialectOf, untyped, type Executor } from '../../db/runner.js';
import type { Absence, BusyVisit, SlotUser } from '../../domain/planning/slots.js';
import type { Place } from '../../domain/planning/travel.js';

/** The jobs collection's own queries (its rules ask these). */

/**
 * The client of a site of the account (undefined when there is no such site), the site's row held
 * (FOR SHARE on PostgreSQL) until the commit: a concurrent move of the site to another client waits
 * for this job, and then sees it (sites/index.ts), so a job never keeps a site of another client.
 */
export async function clientOfSite(db: Executor, accountId: number, siteId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('sites')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('id', '=', siteId)
    .modifyEnd(dialectOf(db).lockClause('share'))
    .executeTakeFirst();
  return row?.client_id;
}

/** The stored address columns of a site or client, or undefined when it has no address at all. */
export async function addressOf(
  db: Executor,
  table: 'sites' | 'clients',
  accountId: number,
  id: number,
  columns: string[],
): Promise<Record<string, unknown> | undefined> {
  const row = (await untyped(db)
    .selectFrom(table)
    .select(columns)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()) as Record<string, unknown> | undefined;
  return row && columns.some((c) => row[c] !== null) ? row : undefined;
}

/**
 * What keeps a job from being deleted (PRODUCT §9, docs/money.md): its quotes (numbered at
 * creation), its invoices (numbered at issue; a draft's lines point at the job's charges), and any
 * charge of it billed by an invoice of another job. Each as the client would name it.
 */
export async function documentsOfJob(db: Executor, accountId: number, jobId: number): Promise<string[]> {
  const [quotes, invoices, billed] = await Promise.all([
    db
      .selectFrom('quotes')
      .select(['number'])
      .where('account_id', '=', accountId)
      .where('job_id', '=', jobId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('invoices')
      .select(['id', 'number', 'state'])
      .where('account_id', '=', accountId)
      .where('job_id', '=', jobId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('charges')
      .innerJoin('invoices', (j) =>
        j.onRef('invoices.id', '=', 'charges.invoice_id').onRef('invoices.account_id', '=', 'charges.account_id'),
      )
      .select(['invoices.id', 'invoices.number'])
      .where('charges.account_id', '=', accountId)
      .where('charges.job_id', '=', jobId)
      .where((eb) => eb.or([eb('invoices.job_id', 'is', null), eb('invoices.job_id', '!=', jobId)]))
      .distinct()
      .execute(),
  ]);
  const invoice = (i: { id: number; number: string | null }) => i.number ?? `draft invoice ${i.id}`;
  return [...quotes.map((q) => q.number), ...invoices.map(invoice), ...billed.map(invoice)];
}

const DAY = 86_400_000;
const placeOf = (lat: unknown, lng: unknown): Place | null =>
  lat === null || lng === null ? null : { lat: Number(lat), lng: Number(lng) };

/** What slots and booking (PRODUCT §15) read of a job: its place and required skills; undefined when missing. */
export async function slotJob(
  db: Executor,
  accountId: number,
  jobId: number,
): Promise<{ place: Place | null; deleted: boolean; skills: number[] } | undefined> {
  const row = await db
    .selectFrom('jobs')
    .select(['address_lat', 'address_lng', 'deleted'])
    .where('account_id', '=', accountId)
    .where('id', '=', jobId)
    .executeTakeFirst();
  if (!row) return undefined;
  const skills = await db
    .selectFrom('job_skills')
    .select('skill_id')
    .where('account_id', '=', accountId)
    .where('job_id', '=', jobId)
    .execute();
  return {
    place: placeOf(row.address_lat, row.address_lng),
    deleted: row.deleted !== 0,
    skills: skills.map((s) => s.skill_id),
  };
}

/**
 * The users slots are offered for: not deleted, with working hours (`userId`: that one only,
 * when it is such a user), each with home and skills.
 */
export async function slotUsers(db: Executor, accountId: number, userId?: number): Promise<SlotUser[]> {
  let q = db
    .selectFrom('users')
    .select(['id', 'working_hours', 'home_location'])
    .where('account_id', '=', accountId)
    .where('deleted', '=', 0)
    .where('working_hours', '!=', '[]')
    .orderBy('id');
  if (userId !== undefined) q = q.where('id', '=', userId);
  const users = await q.execute();
  if (!users.length) return [];
  const skills = await db
    .selectFrom('user_skills')
    .select(['user_id', 'skill_id'])
    .where('account_id', '=', accountId)
    .where(
      'user_id',
      'in',
      users.map((u) => u.id),
    )
    .execute();
  return users
    .map((u) => ({
      id: u.id,
      workingHours: JSON.parse(u.working_hours) as SlotUser['workingHours'],
      home: u.home_location === null ? null : (JSON.parse(u.home_location) as Place),
      skills: skills.filter((s) => s.user_id === u.id).map((s) => s.skill_id),
    }))
    .filter((u) => u.workingHours.length > 0);
}

/**
 * The users' visits that stay where they are (not deleted, not cancelled) meeting [from, to], each
 * with its place (its job's `address.location`, or null); and their unavailabilities meeting it.
 */
export async function busyTimes(
  db: Executor,
  accountId: number,
  userIds: number[],
  from: number,
  to: number,
  except?: number,
): Promise<{ visits: BusyVisit[]; unavailabilities: Absence[] }> {
  if (!userIds.length) return { visits: [], unavailabilities: [] };
  const visits = await db
    .selectFrom('visits')
    .innerJoin('jobs', (j) =>
      j.onRef('jobs.id', '=', 'visits.job_id').onRef('jobs.account_id', '=', 'visits.account_id'),
    )
    .select([
      'visits.id',
      'visits.user_id',
      'visits.start_time',
      'visits.end_time',
      'visits.arrival_window_start',
      'visits.arrival_window_end',
      'jobs.address_lat',
      'jobs.address_lng',
    ])
    .where('visits.account_id', '=', accountId)
    .where('visits.user_id', 'in', userIds)
    .where('visits.deleted', '=', 0)
    .where('visits.state', '!=', 'cancelled')
    // A promised window may reach past the visit's times: read a day either side, keep what meets.
    .where('visits.start_time', '<', to + DAY)
    .where('visits.end_time', '>', from - DAY)
    .where('visits.id', '!=', except ?? 0)
    .orderBy('visits.start_time')
    .execute();
  const absences = await db
    .selectFrom('unavailabilities')
    .select(['user_id', 'start_time', 'end_time'])
    .where('account_id', '=', accountId)
    .where('user_id', 'in', userIds)
    .where('deleted', '=', 0)
    .where('start_time', '<', to)
    .where('end_time', '>', from)
    .execute();
  return {
    visits: visits
      .map((v) => {
        const [start, end] = [Number(v.start_time), Number(v.end_time)];
        const ws = v.arrival_window_start === null ? null : Number(v.arrival_window_start);
        const we = v.arrival_window_end === null ? null : Number(v.arrival_window_end);
        // A visit with a promised window may start anywhere in it: it takes the window's start
        // to the window's end plus its duration, as well as its own times.
        const span: [number, number] =
          ws === null || we === null ? [start, end] : [Math.min(start, ws), Math.max(end, we + (end - start))];
        return { userId: v.user_id!, start: span[0], end: span[1], place: placeOf(v.address_lat, v.address_lng) };
      })
      .filter((v) => v.start < to && v.end > from),
    unavailabilities: absences.map((a) => ({
      userId: a.user_id,
      start: Number(a.start_time),
      end: Number(a.end_time),
    })),
  };
}

/** The visits' change version in the account (src/db/counted.ts), undefined before their first change. */
export async function visitsVersion(db: Executor, accountId: number): Promise<number | undefined> {
  const row = await untyped(db)
    .selectNoFrom(() => [rowVersion(db, 'visits', accountId).as('v')])
    .executeTakeFirst();
  const v = (row as { v?: number | string | null } | undefined)?.v;
  return v === null || v === undefined ? undefined : Number(v);
}

/** The group of a status of the account (undefined when there is none). */
export async function statusGroup(db: Executor, accountId: number, statusId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('statuses')
    .select('status_group')
    .where('account_id', '=', accountId)
    .where('id', '=', statusId)
    .executeTakeFirst();
  return row?.status_group;
}

/**
 * The names of the templates among the job's (`templateIds`, or its stored list when undefined)
 * that are required to complete it and have no submission on it (PRODUCT §17; a correction counts).
 */
export async function formsMissing(
  db: Executor,
  accountId: number,
  jobId: number | undefined,
  templateIds: number[] | undefined,
): Promise<string[]> {
  if (templateIds !== undefined && !templateIds.length) return [];
  let q = db
    .selectFrom('form_templates as t')
    .select('t.name')
    .where('t.account_id', '=', accountId)
    .where('t.required_to_complete', '=', 1)
    .where('t.deleted', '=', 0);
  if (templateIds !== undefined) q = q.where('t.id', 'in', templateIds);
  else
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('job_form_templates as l')
          .select('l.form_template_id')
          .where('l.account_id', '=', accountId)
          .where('l.job_id', '=', jobId ?? 0)
          .whereRef('l.form_template_id', '=', 't.id'),
      ),
    );
  if (jobId !== undefined)
    q = q.where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('form_submissions as s')
            .select('s.id')
            .where('s.account_id', '=', accountId)
            .where('s.job_id', '=', jobId)
            .whereRef('s.template_id', '=', 't.id'),
        ),
      ),
    );
  return (await q.orderBy('t.id').execute()).map((r) => r.name);
}

/** The ids of the assets a job lists. */
export async function assetsOfJob(db: Executor, accountId: number, jobId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('job_assets')
    .select('asset_id')
    .where('account_id', '=', accountId)
    .where('job_id', '=', jobId)
    .execute();
  return rows.map((r) => r.asset_id);
}

/** The site of each of these assets of the account (PRODUCT §16: a job lists its site's), by asset id. */
export async function sitesOfAssets(db: Executor, accountId: number, ids: number[]): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('assets')
    .select(['id', 'site_id'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .modifyEnd(dialectOf(db).lockClause('share'))
    .execute();
  return new Map(rows.map((r) => [r.id, r.site_id]));
}
