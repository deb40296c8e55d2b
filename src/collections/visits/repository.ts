import { dialectOf, type Executor } from '../../db/runner.js';

export type Point = { lat: number; lng: number; accuracy?: number | null };

/** The running timesheet entries of one visit (its user's time is locked first: actions.ts). */
export async function runningEntries(
  db: Executor,
  accountId: number,
  by: { visitId: number },
): Promise<{ id: number; start_time: number }[]> {
  const rows = await db
    .selectFrom('timesheets')
    .select(['id', 'start_time'])
    .where('account_id', '=', accountId)
    .where('end_time', 'is', null)
    .where('deleted', '=', 0)
    .where('visit_id', '=', by.visitId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, start_time: Number(r.start_time) }));
}

/** Ends running entries at `at` (whole seconds of duration, rounded down). */
export async function endEntries(
  db: Executor,
  accountId: number,
  entries: { id: number; start_time: number }[],
  at: number,
) {
  for (const e of entries)
    await db
      .updateTable('timesheets')
      .set({ end_time: at, duration: Math.floor((at - e.start_time) / 1000), modified: at })
      .where('account_id', '=', accountId)
      .where('id', '=', e.id)
      .execute();
}

/** Starts the running `work` entry of a visit's user for that visit and job. */
export async function startEntry(
  db: Executor,
  accountId: number,
  visit: { id: number; job_id: number; user_id: number },
  at: number,
): Promise<number> {
  const row = await db
    .insertInto('timesheets')
    .values({
      account_id: accountId,
      user_id: visit.user_id,
      job_id: visit.job_id,
      visit_id: visit.id,
      kind: 'work',
      start_time: at,
      end_time: null,
      duration: null,
      created: at,
      modified: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The user's live entries that reach past `at` (running, or ending later): what a running entry
 * started at `at` would overlap (src/collections/policy.ts, overlappingEntries, in one read). Locked
 * until the commit (PostgreSQL), in id order, after the user's time (crew time's lock order).
 */
export async function entriesFrom(
  db: Executor,
  accountId: number,
  userId: number,
  at: number,
): Promise<{ id: number; start_time: number; end_time: number | null }[]> {
  const rows = await db
    .selectFrom('timesheets')
    .select(['id', 'start_time', 'end_time'])
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where('deleted', '=', 0)
    .where((eb) => eb.or([eb('end_time', 'is', null), eb('end_time', '>', at)]))
    .orderBy('id')
    .modifyEnd(dialectOf(db).lockClause('no key update'))
    .execute();
  return rows.map((r) => ({
    id: r.id,
    start_time: Number(r.start_time),
    end_time: r.end_time === null ? null : Number(r.end_time),
  }));
}

/** The user's latest ping recorded in [from, to], or undefined. */
export const latestPing = (db: Executor, accountId: number, userId: number, from: number, to: number) =>
  db
    .selectFrom('locations')
    .select(['lat', 'lng'])
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where('recorded_at', '>=', from)
    .where('recorded_at', '<=', to)
    .orderBy('recorded_at', 'desc')
    .limit(1)
    .executeTakeFirst();

/** Where a visit's job is, and whose it is. */
export const jobPlace = (db: Executor, accountId: number, jobId: number) =>
  db
    .selectFrom('jobs')
    .select(['title', 'client_id', 'address_lat', 'address_lng'])
    .where('account_id', '=', accountId)
    .where('id', '=', jobId)
    .executeTakeFirstOrThrow();
