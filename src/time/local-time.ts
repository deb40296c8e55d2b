/**
 * Local dates and times of the account's time zone (PRODUCT §1 `--time-zone`) as instants, with
 * daylight-saving changes: no library, Node's Intl time-zone data.
 */
import { dateFormat, type DateStyle } from './format.js';
const formatter = (timeZone: string): Intl.DateTimeFormat => dateFormat('en-US', timeZone, WALL_CLOCK);
const WALL_CLOCK: DateStyle = {
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
};

const QUARTER = 15 * 60_000;
/** Per zone, the offset of each quarter hour asked for (null: a change of offset inside it). */
const offsets = new Map<string, Map<number, number | null>>();

/**
 * The zone's offset from UTC at `ms`, in ms (positive east of Greenwich). Remembered per quarter
 * hour of UTC: an offset changes on a whole second and never twice within 15 minutes, so a quarter
 * whose first and last seconds have one offset has it throughout (slots over a fortnight ask for
 * thousands of instants; Intl's answer costs microseconds each).
 */
export function offsetAt(ms: number, timeZone: string): number {
  let zone = offsets.get(timeZone);
  if (!zone) offsets.set(timeZone, (zone = new Map()));
  const quarter = Math.floor(ms / QUARTER);
  let known = zone.get(quarter);
  if (known === undefined) {
    const first = exactOffsetAt(quarter * QUARTER, timeZone);
    known = first === exactOffsetAt((quarter + 1) * QUARTER - 1000, timeZone) ? first : null;
    if (zone.size >= 100_000) zone.clear();
    zone.set(quarter, known);
  }
  return known ?? exactOffsetAt(ms, timeZone);
}

function exactOffsetAt(ms: number, timeZone: string): number {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return local - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of a local `date` (`YYYY-MM-DD`) and `minutes` since its midnight. A local time that
 * a spring-forward skips is taken after the change (as a clock set forward shows it); one a
 * fall-back repeats, at its first occurrence.
 */
export function instantOf(date: string, minutes: number, timeZone: string): number {
  const [y, m, d] = date.split('-').map(Number);
  const wall = Date.UTC(y, m - 1, d) + minutes * 60_000;
  // The zone's offsets a few hours either side: no zone changes twice within a day.
  const before = wall - offsetAt(wall - 14 * 3_600_000, timeZone);
  const after = wall - offsetAt(wall + 14 * 3_600_000, timeZone);
  const shows = (ms: number) => ms + offsetAt(ms, timeZone) === wall;
  const valid = [before, after].filter(shows).sort((p, q) => p - q);
  // Skipped (spring forward): the offset before the change, which a clock set forward shows later.
  return valid.length ? valid[0] : before;
}

/** The local date (`YYYY-MM-DD`) at an instant. */
export function localDate(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}`;
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
/** The weekday of a calendar date, as working hours name it. */
export function weekday(date: string): (typeof WEEKDAYS)[number] {
  const [y, m, d] = date.split('-').map(Number);
  return WEEKDAYS[new Date(Date.UTC(y, m - 1, d)).getUTCDay()];
}

/** The calendar date after `date`. */
export function nextDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** Minutes since midnight of `HH:MM`. */
export const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * The working-hours intervals (`{day, start, end}` in the zone, PRODUCT §15) of one local date, as
 * instants [start, end], in time order: what slots and plans both work inside.
 */
export function intervalsOn(
  hours: readonly { day: string; start: string; end: string }[],
  date: string,
  timeZone: string,
): [number, number][] {
  const day = weekday(date);
  return hours
    .filter((h) => h.day === day)
    .map((h): [number, number] => [
      instantOf(date, minutesOf(h.start), timeZone),
      instantOf(date, minutesOf(h.end), timeZone),
    ])
    .filter(([s, e]) => e > s)
    .sort((p, q) => p[0] - q[0]);
}
