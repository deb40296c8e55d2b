import { ApiError } from '../../errors.js';
import { dialectOf, type Executor } from '../../db/runner.js';
import { lockUsersTime } from './locks.js';

/**
 * A visit's check-in and check-out as crew time (PRODUCT §11): the user's running `work` entry
 * started and ended, under crew time's lock order (the visit, locked by its action, then the
 * user's time, then the entries) and its one rule, that a user's entries never overlap. The
 * visits collection's actions call these; what they change they record as changes: `ending` is
 * told the entries about to end before they change (so their before-state is what it records).
 */

/** How far ahead of this server's clock a running entry's start may be and still be ended now (+1 ms). */
const CLOCK_SLACK_MS = 1000;

type Entry = { id: number; start_time: number };

/**
 * Starts the visit's user's running entry at `now` (read once the user's time is ours: a
 * check-in that waited for another starts after the entry that one started), ending the running
 * one. Refused (`visitState`) when that would overlap a later entry.
 */
export async function clockIn(
  tx: Executor,
  accountId: number,
  visit: { id: number; job_id: number; user_id: number },
  clock: () => number,
  ending: (ids: number[]) => Promise<void>,
): Promise<{ at: number; started: number }> {
  await lockUsersTime(tx, accountId, [visit.user_id]);
  let at = clock();
  // What the new entry [now, …) would overlap: the running entry, which it ends, and nothing else.
  let current = await entriesFrom(tx, accountId, visit.user_id, at);
  let running = current.filter((e) => e.end_time === null);
  // The check-in this one waited for started its entry in the same millisecond (or on a
  // server whose clock is a little ahead): this one begins just after it, not a 422.
  const latest = Math.max(...running.map((e) => e.start_time));
  if (running.length && latest >= at && latest - at < CLOCK_SLACK_MS) {
    at = latest + 1;
    current = current.filter((e) => e.end_time === null || e.end_time > at);
    running = current.filter((e) => e.end_time === null);
  }
  if (running.some((e) => e.start_time >= at))
    throw new ApiError('visitState', "the user's running timesheet entry starts later than now");
  if (current.length > running.length)
    throw new ApiError('visitState', "the new entry would overlap one of the user's later timesheet entries");
  if (running.length) await ending(running.map((e) => e.id));
  await endEntries(tx, accountId, running, at);
  return { at, started: await startEntry(tx, accountId, visit, at) };
}

/** Ends the visit's running entries at `now` (read once its user's time is ours), which it returns. */
export async function clockOut(
  tx: Executor,
  accountId: number,
  visit: { id: number; user_id: number | null },
  clock: () => number,
  ending: (ids: number[]) => Promise<void>,
): Promise<number> {
  if (visit.user_id !== null) await lockUsersTime(tx, accountId, [visit.user_id]);
  const at = clock();
  const running = (await runningEntries(tx, accountId, { visitId: visit.id })).filter((e) => e.start_time < at);
  if (running.length) await ending(running.map((e) => e.id));
  await endEntries(tx, accountId, running, at);
  return at;
}

/** The running timesheet entries of one visit (its user's time is locked first). */
async function runningEntries(
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
async function endEntries(db: Executor, accountId: number, entries: Entry[], at: number) {
  for (const e of entries)
    await db
      .updateTable('timesheets')
      .set({ end_time: at, duration: Math.floor((at - e.start_time) / 1000), modified: at })
      .where('account_id', '=', accountId)
      .where('id', '=', e.id)
      .execute();
}

/** Starts the running `work` entry of a visit's user for that visit and job. */
async function startEntry(
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
 * started at `at` would overlap (overlappingEntries, in one read). Locked
 * until the commit (PostgreSQL), in id order, after the user's time (crew time's lock order).
 */
async function entriesFrom(
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
