/**
 * Bookable arrival windows (PRODUCT §15 `GET /jobs/:id/slots`): the windows a new visit of a job can
 * be promised without moving any visit. Pure: the database reads and the travel matrix are the
 * caller's (src/collections/jobs/slots.ts); no clock, no I/O.
 *
 * A window [W, E] of a user is offered when the visit fits whichever moment of it the crew arrives,
 * so the whole span [W, E + duration] is checked:
 *  - the user has every required skill of the job;
 *  - the span lies inside one working-hours interval [Is, Ie] of W's local date (the account's zone);
 *  - W is no earlier than the previous place's departure plus the travel to the job: the previous
 *    visit's end (when it ends after Is), else Is with the travel from home (a user without a home
 *    starts at their first visit: no travel); and no earlier than the end of each of the user's
 *    visits before it, whatever its day, plus its travel (visits of one user may overlap or end
 *    together: the crew must be able to come from any of them);
 *  - E + duration leaves the travel to the next visit (when it starts before Ie), else the travel
 *    home before Ie; and the travel to each of the user's visits after it, whatever its day;
 *  - no unavailability and no visit of the user overlaps the span.
 * Windows start on the local hour. A visit without a place (its job has no `address.location`)
 * costs no travel. `travelSeconds` is the travel the visit adds: previous place → job → next place,
 * less previous → next.
 */
import type { Place } from './travel.js';
import { intervalsOn, localDate, nextDate, offsetAt } from '../../time/local-time.js';

export type DayName = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

export interface SlotUser {
  id: number;
  workingHours: { day: DayName; start: string; end: string }[];
  home: Place | null;
  skills: number[];
}

/**
 * A visit of a user that stays where it is (not deleted, not cancelled): the span it may take, epoch
 * ms (with an arrival window, the caller widens it to the window's start and the window's end plus
 * the visit's duration: its crew may arrive at any moment of the window).
 */
export interface BusyVisit {
  userId: number;
  start: number;
  end: number;
  place: Place | null;
}

export interface Absence {
  userId: number;
  start: number;
  end: number;
}

export interface SlotProblem {
  place: Place;
  skills: number[];
  users: SlotUser[];
  visits: BusyVisit[];
  unavailabilities: Absence[];
  timeZone: string;
  /** Seconds from one place to another (integers). */
  travel: (from: Place, to: Place) => number;
  /** Windows lie inside [from, to] (epoch ms). */
  from: number;
  to: number;
  durationMinutes: number;
  windowMinutes: number;
}

export interface Slot {
  arrivalWindowStart: number;
  arrivalWindowEnd: number;
  userId: number;
  travelSeconds: number;
}

const MINUTE = 60_000;

/** The working-hours intervals [start, end] (epoch ms) of a user that meet [from, to], in time order. */
export function workingIntervals(user: SlotUser, timeZone: string, from: number, to: number): [number, number][] {
  const out: [number, number][] = [];
  // From the local date before `from` (an interval of that date cannot reach past its midnight,
  // but a zone's date may start before `from` in UTC terms) to the one after `to`.
  let date = localDate(from - 86_400_000, timeZone);
  const last = localDate(to + 86_400_000, timeZone);
  for (let guard = 0; guard < 40 && date <= last; guard++, date = nextDate(date)) {
    for (const [s, e] of intervalsOn(user.workingHours, date, timeZone)) if (e > from && s < to) out.push([s, e]);
  }
  return out.sort((p, q) => p[0] - q[0]);
}

/** The instants in [start, end] that show a whole hour on the zone's clock, in order (DST days included). */
export function localHours(start: number, end: number, timeZone: string): number[] {
  const out: number[] = [];
  // Every zone's offset is a multiple of 15 minutes: the local hours are among those instants.
  const step = 15 * MINUTE;
  for (let t = Math.ceil(start / step) * step; t <= end; t += step)
    if ((((t + offsetAt(t, timeZone)) % 3_600_000) + 3_600_000) % 3_600_000 === 0) out.push(t);
  return out;
}

interface Neighbours {
  /** The user's last visit ending at or before `start`, and first starting at or after `end`. */
  before?: BusyVisit;
  after?: BusyVisit;
  overlaps: boolean;
}

function neighbours(visits: BusyVisit[], start: number, end: number): Neighbours {
  let before: BusyVisit | undefined;
  let after: BusyVisit | undefined;
  for (const v of visits) {
    if (v.start < end && v.end > start) return { overlaps: true };
    if (v.end <= start && (!before || v.end > before.end)) before = v;
    if (v.start >= end && (!after || v.start < after.start)) after = v;
  }
  return { before, after, overlaps: false };
}

/**
 * Whether the span [start, end] fits for `user` in `interval`, and the travel it adds; undefined when
 * it does not fit. Exposed for the booking's second check (the same rules, one window).
 */
export function fitOf(
  p: Pick<SlotProblem, 'place' | 'travel'>,
  user: SlotUser,
  interval: [number, number],
  visits: BusyVisit[],
  absences: Absence[],
  start: number,
  end: number,
): number | undefined {
  const [is, ie] = interval;
  if (start < is || end > ie) return undefined;
  if (absences.some((a) => a.start < end && a.end > start)) return undefined;
  const n = neighbours(visits, start, end);
  if (n.overlaps) return undefined;
  const go = (a: Place | null, b: Place | null) => (a && b ? p.travel(a, b) : 0);
  // Where the crew comes from and goes to within the interval.
  const prevInside = n.before && n.before.end > is ? n.before : undefined;
  const nextInside = n.after && n.after.start < ie ? n.after : undefined;
  const prevPlace = prevInside ? prevInside.place : user.home;
  const nextPlace = nextInside ? nextInside.place : user.home;
  const inbound = go(prevPlace, p.place);
  const outbound = go(p.place, nextPlace);
  // And from each visit before, to each after: two visits of a user may overlap or end together
  // (the last one by its end need not be the one furthest away).
  let fromEach = -Infinity;
  let toEach = Infinity;
  for (const v of visits) {
    if (v.end <= start) fromEach = Math.max(fromEach, v.end + go(v.place, p.place) * 1000);
    else if (v.start >= end) toEach = Math.min(toEach, v.start - go(p.place, v.place) * 1000);
  }
  const earliest = Math.max((prevInside ? prevInside.end : is) + inbound * 1000, fromEach);
  const latest = Math.min((nextInside ? nextInside.start : ie) - outbound * 1000, toEach);
  if (start < earliest || end > latest) return undefined;
  const hasPrev = prevInside !== undefined || user.home !== null;
  const hasNext = nextInside !== undefined || user.home !== null;
  const saved = hasPrev && hasNext ? go(prevPlace, nextPlace) : 0;
  return inbound + outbound - saved;
}

/** Every offered slot, ordered by start, then by the travel it adds, then by user id. */
export function computeSlots(p: SlotProblem): Slot[] {
  const required = new Set(p.skills);
  const window = p.windowMinutes * MINUTE;
  const duration = p.durationMinutes * MINUTE;
  const out: Slot[] = [];
  for (const user of p.users) {
    const has = new Set(user.skills);
    if (![...required].every((s) => has.has(s))) continue;
    const visits = p.visits.filter((v) => v.userId === user.id);
    const absences = p.unavailabilities.filter((a) => a.userId === user.id);
    for (const interval of workingIntervals(user, p.timeZone, p.from, p.to)) {
      const first = Math.max(interval[0], p.from);
      // The window lies inside [from, to]; the visit may end after `to`.
      const lastStart = Math.min(interval[1] - window - duration, p.to - window);
      if (lastStart < first) continue;
      for (const w of localHours(first, lastStart, p.timeZone)) {
        const added = fitOf(p, user, interval, visits, absences, w, w + window + duration);
        if (added !== undefined)
          out.push({ arrivalWindowStart: w, arrivalWindowEnd: w + window, userId: user.id, travelSeconds: added });
      }
    }
  }
  return out.sort(
    (x, y) => x.arrivalWindowStart - y.arrivalWindowStart || x.travelSeconds - y.travelSeconds || x.userId - y.userId,
  );
}
