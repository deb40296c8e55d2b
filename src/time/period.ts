import { offsetAt } from './local-time.js';

/**
 * The periods a summary groups dates by (PRODUCT §19), as the keys it answers: `2026-12-01`,
 * `2026-W49` (ISO 8601 week-numbering year and week), `2026-12`, `2026`.
 */
export const PERIODS = ['day', 'week', 'month', 'year'] as const;
export type Period = (typeof PERIODS)[number];
export const isPeriod = (s: string): s is Period => (PERIODS as readonly string[]).includes(s);

/** How a stored date is held: epoch ms, ISO 8601 text with an offset, or a calendar date `YYYY-MM-DD`. */
export type DateSource = 'ms' | 'text' | 'date';

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** The ISO 8601 week of a calendar date: the week of its Thursday, in that Thursday's year. */
export function isoWeek(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  const day = Date.UTC(y, m - 1, d);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0
  const thursday = new Date(day + (3 - weekday) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000)) + 1;
  return `${year}-W${pad2(week)}`;
}

/** A calendar date's key for a period. */
export function periodOfDate(period: Period, date: string): string {
  switch (period) {
    case 'day':
      return date;
    case 'week':
      return isoWeek(date);
    case 'month':
      return date.slice(0, 7);
    case 'year':
      return date.slice(0, 4);
  }
}

/**
 * The zone's offsets, remembered per quarter hour of UTC: every zone changes its offset on a
 * quarter hour, so one Intl call serves every instant of the quarter (a summary of 100,000 visits
 * asks a few thousand, not 100,000).
 */
const QUARTER = 900_000;
const offsets = new Map<string, number>();
function cachedOffset(ms: number, zone: string): number {
  const key = `${zone}|${Math.floor(ms / QUARTER)}`;
  let o = offsets.get(key);
  if (o === undefined) {
    if (offsets.size >= 100_000) offsets.clear();
    offsets.set(key, (o = offsetAt(Math.floor(ms / QUARTER) * QUARTER, zone)));
  }
  return o;
}

/** The local calendar date of an instant in a zone. */
export function localDateOf(ms: number, zone: string): string {
  return new Date(ms + cachedOffset(ms, zone)).toISOString().slice(0, 10);
}

/**
 * The key of a stored date for a period, in the account's zone; null for no date or one that is
 * none (text that no date-time parser reads).
 */
export function periodKey(period: Period, value: unknown, source: DateSource, zone: string): string | null {
  if (value === null || value === undefined) return null;
  if (source === 'date') return /^\d{4}-\d{2}-\d{2}$/.test(String(value)) ? periodOfDate(period, String(value)) : null;
  const ms = source === 'ms' ? Number(value) : Date.parse(String(value));
  if (!Number.isFinite(ms)) return null;
  return periodOfDate(period, localDateOf(ms, zone));
}
