/**
 * Which dates of an agreement are occurrences (PRODUCT §16), and when their visits are: pure
 * functions over the rule (rrule.ts), the agreement's dates and today in the account's zone.
 */
import { instantOf, minutesOf } from '../../time/local-time.js';
import { addDays } from './dates.js';
import { expand, type Rule } from './rrule.js';

/** The most occurrences one agreement may have in its horizon. */
export const MAX_OCCURRENCES = 1000;

export interface Schedule {
  rule: Rule;
  startDate: string;
  endDate: string | null;
  skipDates: readonly string[];
  horizonDays: number;
}

/** The last date of the horizon: the earlier of `endDate` and today + `horizonDays`. */
export function horizonEnd(s: Schedule, today: string): string {
  const far = addDays(today, s.horizonDays);
  return s.endDate !== null && s.endDate < far ? s.endDate : far;
}

/**
 * The occurrence dates from the later of `startDate` and today to the horizon's end, less
 * `skipDates`, in order; `undefined` when there are more than MAX_OCCURRENCES.
 */
export function occurrenceDates(s: Schedule, today: string): string[] | undefined {
  const from = s.startDate > today ? s.startDate : today;
  const skip = new Set(s.skipDates);
  const dates = expand(s.rule, s.startDate, horizonEnd(s, today), { from }).filter((d) => !skip.has(d));
  return dates.length > MAX_OCCURRENCES ? undefined : dates;
}

/**
 * Whether the agreement has ended by `today`: past `endDate`, or past the rule's last date (COUNT
 * dates before today; no date of the rule from today to UNTIL).
 */
export function hasEnded(s: Schedule, today: string): boolean {
  if (s.endDate !== null && s.endDate < today) return true;
  if (s.rule.count !== undefined) {
    if (s.startDate >= today) return false;
    return expand(s.rule, s.startDate, addDays(today, -1)).length >= s.rule.count;
  }
  if (s.rule.until === undefined) return false;
  if (s.rule.until < today) return true;
  return expand(s.rule, s.startDate, s.rule.until, { from: today, limit: 0 }).length === 0;
}

/** A visit's start and end (epoch ms) on a local date at `visitTime` in the zone, that date's offset. */
export function visitInterval(date: string, visitTime: string, visitMinutes: number, zone: string): [number, number] {
  const start = instantOf(date, minutesOf(visitTime), zone);
  return [start, start + visitMinutes * 60_000];
}
