import { ApiError, ERRORS } from '../../errors.js';
import type { ActionRequest } from '../machinery/collection.js';
import { serverCaller } from '../machinery/server-caller.js';
import type { Services } from '../machinery/services.js';
import { book, DEFAULT_DURATION, DEFAULT_WINDOW, slots } from './actions.js';

/** The booking page offers the slots from now to 14 days ahead (PRODUCT §18). */
export const BOOKING_DAYS = 14;
const DAY = 86_400_000;
const MINUTE = 60_000;
const QUARTER = 15 * MINUTE;
const STATE_FORBIDS = ERRORS.stateForbids.code;

/** A slot as the page offers it: the window, its user, and the user's first name for the button. */
export interface Offer {
  start: number;
  end: number;
  userId: number;
  firstName: string;
}

/** What the booking page shows of a job: whose it is, the offers, or why there are none. */
export interface BookingView {
  company: string;
  title: string;
  timeZone: string;
  offers: Offer[];
  /** Why nothing is offered (no place, no free time), when nothing is. */
  none?: string;
}

/**
 * The customer acting on the page is the server (events with actor null, PRODUCT §18), asking
 * exactly what `GET /jobs/:id/slots` and `POST /jobs/:id/book` are asked.
 */
const asServer = (services: Services, accountId: number, item: number, now: number): ActionRequest => ({
  caller: { ...serverCaller(services, accountId, now), permissions: new Set(['visits.write']) },
  item,
  query: {},
  body: undefined,
  services,
});

/** Whose job it is and its title, and the account's time zone the page shows times in. */
export async function bookingHeader(services: Services, accountId: number, jobId: number): Promise<BookingView> {
  // One statement: the job, in its account (the join keeps the tenant).
  const row = await services.database.db
    .selectFrom('jobs')
    .innerJoin('accounts', 'accounts.id', 'jobs.account_id')
    .select(['jobs.title', 'accounts.company_name', 'accounts.time_zone'])
    .where('jobs.account_id', '=', accountId)
    .where('jobs.id', '=', jobId)
    .executeTakeFirstOrThrow();
  return { company: row.company_name, title: row.title, timeZone: row.time_zone, offers: [] };
}

/** The page's offers: `GET /jobs/:id/slots` with its defaults, from now to 14 days ahead. */
export async function bookingView(services: Services, accountId: number, jobId: number, now: number) {
  const db = services.database.db;
  const view = await bookingHeader(services, accountId, jobId);
  let found: { arrivalWindowStart: string; arrivalWindowEnd: string; user: { id: number } }[];
  try {
    const answer = await slots({
      ...asServer(services, accountId, jobId, now),
      // To the last quarter hour before 14 days from now: windows end on a local hour (a quarter
      // of UTC), so none is lost, and the slots' answer is remembered for that quarter (memo).
      query: {
        from: new Date(now).toISOString(),
        to: new Date(Math.floor((now + BOOKING_DAYS * DAY) / QUARTER) * QUARTER).toISOString(),
      },
    });
    found = (answer.body as { slots: typeof found }).slots;
  } catch (err) {
    // A job without a place (or deleted meanwhile) offers nothing, and says so.
    if (!(err instanceof ApiError) || err.body.code !== STATE_FORBIDS) throw err;
    return { ...view, none: `This job cannot be booked online. Please contact ${view.company}.` };
  }
  if (!found.length)
    return {
      ...view,
      none: `No times are free in the next ${BOOKING_DAYS} days. Please contact ${view.company}.`,
    };
  const ids = [...new Set(found.map((s) => s.user.id))];
  const names = new Map(
    (
      await db
        .selectFrom('users')
        .select(['id', 'first_name'])
        .where('account_id', '=', accountId)
        .where('id', 'in', ids)
        .execute()
    ).map((u) => [u.id, u.first_name]),
  );
  view.offers = found.map((s) => ({
    start: Date.parse(s.arrivalWindowStart),
    end: Date.parse(s.arrivalWindowEnd),
    userId: s.user.id,
    firstName: names.get(s.user.id) ?? '',
  }));
  return view;
}

/** Why a choice was not booked: the slot was taken meanwhile (409) or is not one offered (422). */
export class NotBooked extends Error {
  constructor(
    readonly status: 409 | 422,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Books the slot starting at `start` for `userId` exactly as `POST /jobs/:id/book` does (the
 * slots' default window and duration, checked again under the lock on the user's time), and
 * answers the new visit's id.
 */
export async function bookOffer(
  services: Services,
  accountId: number,
  jobId: number,
  start: number,
  userId: number,
  now: number,
): Promise<number> {
  const slot = {
    arrivalWindowStart: new Date(start).toISOString(),
    arrivalWindowEnd: new Date(start + DEFAULT_WINDOW * MINUTE).toISOString(),
    user: { id: userId },
    duration: DEFAULT_DURATION,
  };
  let answer;
  try {
    answer = await book({ ...asServer(services, accountId, jobId, now), body: { slots: [slot] } });
  } catch (err) {
    if (err instanceof ApiError && err.body.code === STATE_FORBIDS)
      throw new NotBooked(409, 'Sorry, that time was just taken. Please choose another.');
    throw err;
  }
  if (answer.status !== 200) throw new NotBooked(422, 'Please choose one of the times shown.');
  return (answer.body as { visits: { id: number }[] }).visits[0].id;
}

/** The window of a visit of the job booked on its page, for the confirmation; undefined if none. */
export async function bookedWindow(services: Services, accountId: number, jobId: number, visitId: number) {
  const row = await services.database.db
    .selectFrom('visits')
    .select(['arrival_window_start', 'arrival_window_end', 'start_time', 'end_time'])
    .where('account_id', '=', accountId)
    .where('job_id', '=', jobId)
    .where('id', '=', visitId)
    .where('deleted', '=', 0)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    start: Number(row.arrival_window_start ?? row.start_time),
    end: Number(row.arrival_window_end ?? row.end_time),
  };
}
