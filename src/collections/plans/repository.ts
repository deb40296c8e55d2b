import { dialectOf, type Executor } from '../../db/runner.js';
import { validationError, type ApiErrorBody } from '../../errors.js';
import { instantOf, intervalsOn, nextDate } from '../../time/local-time.js';
import type { FixedVisit, Interval, PlanInput, PlanUser, PlanVisit } from '../../domain/planning/plan.js';
import type { Place } from '../../domain/planning/travel.js';
import type { Interval as Hours } from '../machinery/working-hours.js';
import { accountZone } from '../machinery/money.js';

/** The plans collection's own queries: what a plan is made of, and what it was made of (staleness). */

export const MAX_PLAN_VISITS = 2000;

/** What a plan's staleness is judged by: versions of its users and visits, of their leave and other visits. */
export interface Snapshot {
  users: Record<string, number>;
  visits: Record<string, number>;
  unavailabilities: Record<string, number>;
}

const parsePlace = (text: string | null): Place | null => {
  if (!text) return null;
  const p = JSON.parse(text) as Place | null;
  return p && typeof p.lat === 'number' && typeof p.lng === 'number' ? { lat: p.lat, lng: p.lng } : null;
};

/** The visits of the day's users that stay as they are (not in `exclude`), with their places. */
async function dayVisits(
  db: Executor,
  accountId: number,
  userIds: number[],
  dayStart: number,
  dayEnd: number,
  lock = false,
) {
  if (!userIds.length) return [];
  let q = db
    .selectFrom('visits')
    .innerJoin('jobs', (j) =>
      j.onRef('jobs.account_id', '=', 'visits.account_id').onRef('jobs.id', '=', 'visits.job_id'),
    )
    .select([
      'visits.id',
      'visits.user_id',
      'visits.start_time',
      'visits.end_time',
      'visits.version',
      'jobs.address_lat',
      'jobs.address_lng',
    ])
    .where('visits.account_id', '=', accountId)
    .where('visits.user_id', 'in', userIds)
    .where('visits.deleted', '=', 0)
    .where('visits.state', '!=', 'cancelled')
    .where('visits.start_time', '<', dayEnd)
    .where('visits.end_time', '>', dayStart)
    .orderBy('visits.id');
  if (lock) q = q.modifyEnd(dialectOf(db).lockClause('update'));
  return q.execute();
}

async function dayUnavailabilities(
  db: Executor,
  accountId: number,
  userIds: number[],
  dayStart: number,
  dayEnd: number,
) {
  if (!userIds.length) return [];
  return db
    .selectFrom('unavailabilities')
    .select(['id', 'user_id', 'start_time', 'end_time', 'version'])
    .where('account_id', '=', accountId)
    .where('user_id', 'in', userIds)
    .where('deleted', '=', 0)
    .where('start_time', '<', dayEnd)
    .where('end_time', '>', dayStart)
    .orderBy('id')
    .execute();
}

const placeOf = (r: { address_lat: number | null; address_lng: number | null }): Place | null =>
  r.address_lat === null || r.address_lng === null ? null : { lat: Number(r.address_lat), lng: Number(r.address_lng) };

export interface Loaded {
  errors: ApiErrorBody[];
  input?: PlanInput;
  userIds: number[];
  visitIds: number[];
  snapshot?: Snapshot;
}

/**
 * What a plan of `date` is made of: the users (given, or every user with working hours that day),
 * the visits (given, or the day's scheduled ones neither locked nor deleted), their skills, leave,
 * places and the visits that stay; or the failures naming `users` or `visits`.
 */
export async function loadPlan(
  db: Executor,
  accountId: number,
  date: string,
  usersIn: { id: number }[] | undefined,
  visitsIn: { id: number }[] | undefined,
): Promise<Loaded> {
  const timeZone = await accountZone(db, accountId);
  const dayStart = instantOf(date, 0, timeZone);
  const dayEnd = instantOf(nextDate(date), 0, timeZone);
  const errors: ApiErrorBody[] = [];

  let userRows = await db
    .selectFrom('users')
    .select(['id', 'working_hours', 'home_location', 'version', 'deleted'])
    .where('account_id', '=', accountId)
    .$if(usersIn !== undefined, (q) => q.where('id', 'in', usersIn!.length ? usersIn!.map((u) => u.id) : [0]))
    .$if(usersIn === undefined, (q) => q.where('deleted', '=', 0))
    .orderBy('id')
    .execute();
  const hoursOf = (r: { working_hours: string }) => JSON.parse(r.working_hours) as Hours[];
  if (usersIn !== undefined) {
    const found = new Set(userRows.map((r) => r.id));
    const missing = usersIn.filter((u) => !found.has(u.id));
    if (missing.length) errors.push(validationError('reference', 'users'));
    if (new Set(usersIn.map((u) => u.id)).size !== usersIn.length) errors.push(validationError('duplicate', 'users'));
    if (userRows.some((r) => r.deleted))
      errors.push(validationError('invalid', 'users', 'a deleted user is not planned'));
  } else userRows = userRows.filter((r) => intervalsOn(hoursOf(r), date, timeZone).length > 0);

  let visitRows;
  const visitSelect = db
    .selectFrom('visits')
    .innerJoin('jobs', (j) =>
      j.onRef('jobs.account_id', '=', 'visits.account_id').onRef('jobs.id', '=', 'visits.job_id'),
    )
    .select([
      'visits.id',
      'visits.job_id',
      'visits.user_id',
      'visits.start_time',
      'visits.end_time',
      'visits.arrival_window_start',
      'visits.arrival_window_end',
      'visits.locked',
      'visits.deleted',
      'visits.version',
      'jobs.address_lat',
      'jobs.address_lng',
    ])
    .where('visits.account_id', '=', accountId)
    .orderBy('visits.id');
  if (visitsIn !== undefined) {
    if (visitsIn.length > MAX_PLAN_VISITS)
      return {
        errors: [validationError('invalid', 'visits', `at most ${MAX_PLAN_VISITS} visits`)],
        userIds: [],
        visitIds: [],
      };
    if (new Set(visitsIn.map((v) => v.id)).size !== visitsIn.length)
      errors.push(validationError('duplicate', 'visits'));
    visitRows = visitsIn.length
      ? await visitSelect
          .where(
            'visits.id',
            'in',
            visitsIn.map((v) => v.id),
          )
          .execute()
      : [];
    const found = new Set(visitRows.map((r) => r.id));
    if (visitsIn.some((v) => !found.has(v.id))) errors.push(validationError('reference', 'visits'));
    if (visitRows.some((r) => r.locked || r.deleted))
      errors.push(validationError('invalid', 'visits', 'a locked or deleted visit is never moved by a plan'));
  } else {
    visitRows = await visitSelect
      .where('visits.state', '=', 'scheduled')
      .where('visits.locked', '=', 0)
      .where('visits.deleted', '=', 0)
      .where('visits.start_time', '>=', dayStart)
      .where('visits.start_time', '<', dayEnd)
      .limit(MAX_PLAN_VISITS + 1)
      .execute();
    if (visitRows.length > MAX_PLAN_VISITS)
      errors.push(validationError('invalid', 'visits', `the date has more than ${MAX_PLAN_VISITS} visits to plan`));
  }
  if (errors.length) return { errors, userIds: [], visitIds: [] };

  const userIds = userRows.map((r) => r.id);
  const visitIds = visitRows.map((r) => r.id);
  const jobIds = [...new Set(visitRows.map((r) => r.job_id))];
  const userSkills = userIds.length
    ? await db
        .selectFrom('user_skills')
        .select(['user_id', 'skill_id'])
        .where('account_id', '=', accountId)
        .where('user_id', 'in', userIds)
        .execute()
    : [];
  const jobSkills = jobIds.length
    ? await db
        .selectFrom('job_skills')
        .select(['job_id', 'skill_id'])
        .where('account_id', '=', accountId)
        .where('job_id', 'in', jobIds)
        .execute()
    : [];
  const leave = await dayUnavailabilities(db, accountId, userIds, dayStart, dayEnd);
  const inPlan = new Set(visitIds);
  const currentUsers = [...new Set(visitRows.map((r) => r.user_id).filter((u): u is number => u !== null))];
  const everyone = [...new Set([...userIds, ...currentUsers])];
  const staying = (await dayVisits(db, accountId, everyone, dayStart, dayEnd)).filter((r) => !inPlan.has(r.id));
  const homes = new Map<number, Place | null>();
  const extraUsers = currentUsers.filter((u) => !userIds.includes(u));
  const homeRows = [
    ...userRows,
    ...(extraUsers.length
      ? await db
          .selectFrom('users')
          .select(['id', 'home_location'])
          .where('account_id', '=', accountId)
          .where('id', 'in', extraUsers)
          .execute()
      : []),
  ];
  for (const r of homeRows) homes.set(r.id, parsePlace(r.home_location));

  const users: PlanUser[] = userRows.map((r) => ({
    id: r.id,
    home: parsePlace(r.home_location),
    skills: userSkills.filter((s) => s.user_id === r.id).map((s) => s.skill_id),
    intervals: intervalsOn(hoursOf(r), date, timeZone),
    busy: leave.filter((l) => l.user_id === r.id).map((l) => [Number(l.start_time), Number(l.end_time)] as Interval),
  }));
  const visits: PlanVisit[] = visitRows.map((r) => ({
    id: r.id,
    place: placeOf(r),
    start: Number(r.start_time),
    end: Number(r.end_time),
    window:
      r.arrival_window_start === null || r.arrival_window_end === null
        ? null
        : [Number(r.arrival_window_start), Number(r.arrival_window_end)],
    skills: jobSkills.filter((s) => s.job_id === r.job_id).map((s) => s.skill_id),
    user: r.user_id,
  }));
  const fixed: FixedVisit[] = staying.map((r) => ({
    id: r.id,
    user: r.user_id!,
    place: placeOf(r),
    start: Number(r.start_time),
    end: Number(r.end_time),
  }));
  const snapshot = await snapshotOf(db, accountId, userIds, visitIds, date, timeZone);
  return { errors: [], input: { dayStart, dayEnd, users, visits, fixed, homes }, userIds, visitIds, snapshot };
}

/**
 * The versions a plan depends on: its users', its visits', and of its users' leave and other
 * visits of the date. Read again by `apply` (with `lock`, the visits locked): any difference is stale.
 */
export async function snapshotOf(
  db: Executor,
  accountId: number,
  userIds: number[],
  visitIds: number[],
  date: string,
  timeZone: string,
  lock = false,
): Promise<Snapshot> {
  const dayStart = instantOf(date, 0, timeZone);
  const dayEnd = instantOf(nextDate(date), 0, timeZone);
  const users = userIds.length
    ? await db
        .selectFrom('users')
        .select(['id', 'version'])
        .where('account_id', '=', accountId)
        .where('id', 'in', userIds)
        .execute()
    : [];
  let vq = db
    .selectFrom('visits')
    .select(['id', 'version'])
    .where('account_id', '=', accountId)
    .where('id', 'in', visitIds.length ? visitIds : [0])
    .orderBy('id');
  if (lock) vq = vq.modifyEnd(dialectOf(db).lockClause('update'));
  const visits = visitIds.length ? await vq.execute() : [];
  const others = await dayVisits(db, accountId, userIds, dayStart, dayEnd, lock);
  const leave = await dayUnavailabilities(db, accountId, userIds, dayStart, dayEnd);
  const map = (rows: { id: number; version: number }[]) =>
    Object.fromEntries(rows.map((r) => [String(r.id), Number(r.version)]).sort((a, b) => Number(a[0]) - Number(b[0])));
  return {
    users: map(users),
    visits: map([...visits, ...others.filter((o) => !visitIds.includes(o.id))]),
    unavailabilities: map(leave),
  };
}

export const sameSnapshot = (a: Snapshot, b: Snapshot): boolean =>
  JSON.stringify(a.users) === JSON.stringify(b.users) &&
  JSON.stringify(a.visits) === JSON.stringify(b.visits) &&
  JSON.stringify(a.unavailabilities) === JSON.stringify(b.unavailabilities);

/** The plan, locked until the commit. */
export function lockPlan(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('plans')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .executeTakeFirst();
}

export async function setPlanState(db: Executor, accountId: number, id: number, state: string, now: number) {
  await db
    .updateTable('plans')
    .set({ state, modified: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Moves a visit as a plan routed it. */
export async function moveVisit(
  db: Executor,
  accountId: number,
  step: { id: number; user: number; start: number; end: number },
  now: number,
) {
  await db
    .updateTable('visits')
    .set({ user_id: step.user, start_time: step.start, end_time: step.end, modified: now })
    .where('account_id', '=', accountId)
    .where('id', '=', step.id)
    .execute();
}

/** Plans are kept 30 days: the account's older ones go when a new one is made. */
export const PLAN_RETENTION_MS = 30 * 86_400_000;
export async function purgeOldPlans(db: Executor, accountId: number, now: number) {
  await db
    .deleteFrom('plans')
    .where('account_id', '=', accountId)
    .where('created', '<', now - PLAN_RETENTION_MS)
    .execute();
}
