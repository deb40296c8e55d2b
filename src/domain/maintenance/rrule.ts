/**
 * The RFC 5545 recurrence rules of service agreements (PRODUCT §16), parsed, validated and expanded
 * by us, on calendar dates only (a visit's time of day is the agreement's `visitTime`, applied
 * later in the account's zone): `FREQ` DAILY | WEEKLY | MONTHLY | YEARLY with `INTERVAL`,
 * `COUNT`, `UNTIL` (a date), `BYDAY` (ordinals with MONTHLY and YEARLY), `BYMONTHDAY`, `BYMONTH`,
 * `BYSETPOS` and `WKST`. Anything else is refused with the reason.
 *
 * As RFC 5545 3.8.5.3 says, `DTSTART` (the agreement's `startDate`) is always the first instance
 * and counts toward `COUNT`, and the rule's own instances are the dates after it. One decision of
 * PRODUCT §16 departs from the RFC: a MONTHLY or YEARLY rule without BYMONTHDAY/BYDAY repeats the
 * start's day, and a month lacking it gives its last day (31 January monthly: 28 or 29 February,
 * 31 March, 30 April…), where the RFC skips such months. An explicit BYMONTHDAY=31 still skips
 * the months without a 31st, as the RFC does.
 */
import { addDays, daysInMonth, utc } from './dates.js';

export const FREQS = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'] as const;
export type Freq = (typeof FREQS)[number];
const DAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;
type Day = (typeof DAYS)[number];

export interface Rule {
  freq: Freq;
  interval: number;
  count?: number;
  /** Inclusive, `YYYY-MM-DD`. */
  until?: string;
  /** Weekday 0 (Sunday) – 6, with an ordinal (±1…53) or none. */
  byDay: { day: number; n?: number }[];
  byMonthDay: number[];
  byMonth: number[];
  bySetPos: number[];
  /** 0 (Sunday) – 6; default Monday. */
  wkst: number;
}

const PARTS = new Set(['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'BYSETPOS', 'WKST']);

/** A signed integer in [-max, -min] ∪ [min, max] (no zero), else undefined. */
function signed(text: string, max: number, allowNegative = true): number | undefined {
  if (!/^[+-]?\d{1,3}$/.test(text)) return undefined;
  const n = Number(text);
  if (n === 0 || Math.abs(n) > max || (n < 0 && !allowNegative)) return undefined;
  return n;
}

/** A real calendar date of `YYYY-MM-DD`. */
export function isDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}

/** The rule of an RRULE value, or the reason it is refused. */
export function parseRule(value: unknown): Rule | { error: string } {
  if (typeof value !== 'string') return { error: 'must be a string, an RFC 5545 RRULE value' };
  if (value.length > 500) return { error: 'is longer than 500 characters' };
  const seen = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    if (eq < 0 || !PARTS.has(name))
      return { error: `'${name.slice(0, 20)}' is not a rule part this server takes (${[...PARTS].join(', ')})` };
    if (seen.has(name)) return { error: `${name} is given twice` };
    seen.set(name, part.slice(eq + 1));
  }
  const freq = seen.get('FREQ');
  if (freq === undefined) return { error: 'FREQ is required' };
  if (!(FREQS as readonly string[]).includes(freq)) return { error: `FREQ must be one of ${FREQS.join(', ')}` };
  const rule: Rule = { freq: freq as Freq, interval: 1, byDay: [], byMonthDay: [], byMonth: [], bySetPos: [], wkst: 1 };
  const list = (name: string) => (seen.get(name) ?? '').split(',');

  if (seen.has('INTERVAL')) {
    const n = signed(seen.get('INTERVAL')!, 999, false);
    if (n === undefined || seen.get('INTERVAL')!.startsWith('+'))
      return { error: 'INTERVAL must be an integer from 1 to 999' };
    rule.interval = n;
  }
  if (seen.has('COUNT') && seen.has('UNTIL')) return { error: 'COUNT and UNTIL cannot both be given' };
  if (seen.has('COUNT')) {
    const text = seen.get('COUNT')!;
    if (!/^\d{1,4}$/.test(text) || Number(text) < 1) return { error: 'COUNT must be an integer from 1 to 9999' };
    rule.count = Number(text);
  }
  if (seen.has('UNTIL')) {
    const m = /^(\d{4})(\d{2})(\d{2})$/.exec(seen.get('UNTIL')!);
    const date = m ? `${m[1]}-${m[2]}-${m[3]}` : '';
    if (!m || !isDate(date)) return { error: 'UNTIL must be a date, YYYYMMDD' };
    rule.until = date;
  }
  if (seen.has('BYDAY')) {
    for (const item of list('BYDAY')) {
      const m = /^([+-]?\d{1,2})?(SU|MO|TU|WE|TH|FR|SA)$/.exec(item);
      if (!m)
        return { error: `BYDAY '${item.slice(0, 20)}' is not a weekday (SU, MO, TU, WE, TH, FR, SA, with an ordinal)` };
      const day = DAYS.indexOf(m[2] as Day);
      if (m[1] !== undefined) {
        if (rule.freq !== 'MONTHLY' && rule.freq !== 'YEARLY')
          return { error: 'BYDAY takes ordinals (such as 1MO or -1FR) only with FREQ=MONTHLY or YEARLY' };
        const max = rule.freq === 'MONTHLY' || seen.has('BYMONTH') ? 5 : 53;
        const n = signed(m[1], max);
        if (n === undefined) return { error: `a BYDAY ordinal must be from 1 to ${max} or -${max} to -1` };
        rule.byDay.push({ day, n });
      } else rule.byDay.push({ day });
    }
  }
  if (seen.has('BYMONTHDAY')) {
    if (rule.freq === 'WEEKLY') return { error: 'BYMONTHDAY cannot be used with FREQ=WEEKLY' };
    for (const item of list('BYMONTHDAY')) {
      const n = signed(item, 31);
      if (n === undefined) return { error: 'BYMONTHDAY values must be from 1 to 31 or -31 to -1' };
      rule.byMonthDay.push(n);
    }
  }
  if (seen.has('BYMONTH')) {
    for (const item of list('BYMONTH')) {
      const n = /^\d{1,2}$/.test(item) ? Number(item) : NaN;
      if (!(n >= 1 && n <= 12)) return { error: 'BYMONTH values must be from 1 to 12' };
      rule.byMonth.push(n);
    }
  }
  if (seen.has('BYSETPOS')) {
    if (!seen.has('BYDAY') && !seen.has('BYMONTHDAY') && !seen.has('BYMONTH'))
      return { error: 'BYSETPOS needs BYDAY, BYMONTHDAY or BYMONTH' };
    for (const item of list('BYSETPOS')) {
      const n = signed(item, 366);
      if (n === undefined) return { error: 'BYSETPOS values must be from 1 to 366 or -366 to -1' };
      rule.bySetPos.push(n);
    }
  }
  if (seen.has('WKST')) {
    const day = DAYS.indexOf(seen.get('WKST') as Day);
    if (day < 0) return { error: 'WKST must be a weekday: SU, MO, TU, WE, TH, FR or SA' };
    rule.wkst = day;
  }
  return rule;
}

interface Ymd {
  y: number;
  m: number;
  d: number;
}
const ymd = (date: string): Ymd => {
  const [y, m, d] = date.split('-').map(Number);
  return { y, m, d };
};
const fmt = (y: number, m: number, d: number) =>
  `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
const weekdayOf = (y: number, m: number, d: number) => utc(y, m, d).getUTCDay();
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

/** The dates of month `m` of `y` a BYDAY entry names (an ordinal picks one of them). */
function weekdaysIn(dates: string[], entry: { day: number; n?: number }): string[] {
  const all = dates.filter((x) => {
    const { y, m, d } = ymd(x);
    return weekdayOf(y, m, d) === entry.day;
  });
  if (entry.n === undefined) return all;
  const picked = entry.n > 0 ? all[entry.n - 1] : all[all.length + entry.n];
  return picked === undefined ? [] : [picked];
}

const monthDates = (y: number, m: number) => Array.from({ length: daysInMonth(y, m) }, (_, i) => fmt(y, m, i + 1));

/** A month's days named by BYMONTHDAY (negative: from its end). */
function monthDays(y: number, m: number, list: number[]): string[] {
  const last = daysInMonth(y, m);
  return list
    .map((n) => (n > 0 ? n : last + n + 1))
    .filter((d) => d >= 1 && d <= last)
    .map((d) => fmt(y, m, d));
}

/** The candidate dates of one period (sorted, distinct), before BYSETPOS. */
function candidates(rule: Rule, start: Ymd, period: number, startDay: number): string[] {
  const matchesMonth = (x: string) => !rule.byMonth.length || rule.byMonth.includes(ymd(x).m);
  const matchesDay = (x: string) => {
    const { y, m, d } = ymd(x);
    return !rule.byDay.length || rule.byDay.some((e) => e.day === weekdayOf(y, m, d));
  };
  const matchesMonthDay = (x: string) => {
    const { y, m, d } = ymd(x);
    const last = daysInMonth(y, m);
    return !rule.byMonthDay.length || rule.byMonthDay.some((n) => (n > 0 ? n : last + n + 1) === d);
  };
  let out: string[];
  switch (rule.freq) {
    case 'DAILY': {
      const x = addDays(fmt(start.y, start.m, start.d), period * rule.interval);
      out = [x].filter((v) => matchesMonth(v) && matchesMonthDay(v) && matchesDay(v));
      break;
    }
    case 'WEEKLY': {
      // The week (from WKST) that holds the start, `period × interval` weeks on.
      const back = (weekdayOf(start.y, start.m, start.d) - rule.wkst + 7) % 7;
      const first = addDays(fmt(start.y, start.m, start.d), -back + period * rule.interval * 7);
      const week = Array.from({ length: 7 }, (_, i) => addDays(first, i));
      const days = rule.byDay.length ? rule.byDay.map((e) => e.day) : [startDay];
      out = week.filter((x) => {
        const { y, m, d } = ymd(x);
        return days.includes(weekdayOf(y, m, d)) && matchesMonth(x);
      });
      break;
    }
    case 'MONTHLY': {
      const index = start.y * 12 + (start.m - 1) + period * rule.interval;
      const [y, m] = [Math.floor(index / 12), (index % 12) + 1];
      if (!matchesMonth(fmt(y, m, 1))) return [];
      out = inMonth(rule, y, m, start.d, matchesMonthDay);
      break;
    }
    case 'YEARLY': {
      const y = start.y + period * rule.interval;
      if (rule.byDay.some((e) => e.n !== undefined) && !rule.byMonth.length) {
        // Ordinal weekdays of the whole year (20MO: the year's 20th Monday).
        const year = Array.from({ length: 12 }, (_, i) => monthDates(y, i + 1)).flat();
        out = rule.byDay.flatMap((e) => weekdaysIn(year, e)).filter(matchesMonthDay);
      } else if (!rule.byMonth.length && !rule.byMonthDay.length && !rule.byDay.length) {
        out = [fmt(y, start.m, Math.min(start.d, daysInMonth(y, start.m)))];
      } else if (!rule.byMonth.length && !rule.byMonthDay.length) {
        // Weekdays without ordinals over the whole year.
        out = Array.from({ length: 12 }, (_, i) => monthDates(y, i + 1))
          .flat()
          .filter(matchesDay);
      } else {
        const months = rule.byMonth.length
          ? rule.byMonth
          : rule.byMonthDay.length
            ? Array.from({ length: 12 }, (_, i) => i + 1)
            : [start.m];
        out = months.flatMap((m) => inMonth(rule, y, m, start.d, matchesMonthDay));
      }
      break;
    }
  }
  return [...new Set(out)].sort();
}

/** The candidates of one month of a MONTHLY rule (or of a YEARLY one's BYMONTH). */
function inMonth(
  rule: Rule,
  y: number,
  m: number,
  startDay: number,
  matchesMonthDay: (x: string) => boolean,
): string[] {
  if (rule.byDay.length) return rule.byDay.flatMap((e) => weekdaysIn(monthDates(y, m), e)).filter(matchesMonthDay);
  if (rule.byMonthDay.length) return monthDays(y, m, rule.byMonthDay);
  // PRODUCT §16: the start's day, or the month's last when it has fewer days.
  return [fmt(y, m, Math.min(startDay, daysInMonth(y, m)))];
}

function applySetPos(rule: Rule, dates: string[]): string[] {
  if (!rule.bySetPos.length) return dates;
  const picked = rule.bySetPos
    .map((n) => (n > 0 ? dates[n - 1] : dates[dates.length + n]))
    .filter((x): x is string => x !== undefined);
  return [...new Set(picked)].sort();
}

/**
 * The dates of the rule from `start` (always the first, counted by COUNT) up to and including
 * `last` (and UNTIL), in order. `limit` stops the expansion early: the caller asked for at most
 * that many dates from `from` on (the rest is not needed to know that there are more). `walked`
 * counts the periods looked at (the work of the expansion, for tests).
 */
export function expand(
  rule: Rule,
  start: string,
  last: string,
  opts: { from?: string; limit?: number; walked?: { periods: number } } = {},
): string[] {
  const end = rule.until !== undefined && rule.until < last ? rule.until : last;
  const out: string[] = [];
  const from = opts.from ?? start;
  const limit = opts.limit ?? Infinity;
  if (start > end) return out;
  let counted = 1;
  const push = (x: string) => {
    if (x >= from) out.push(x);
  };
  push(start);
  if (rule.count === 1) return out;
  const s = ymd(start);
  const startDay = weekdayOf(s.y, s.m, s.d);
  const endDay = dayNumber(end);
  // Without COUNT nothing before `from` matters: the periods wholly before it are jumped over.
  const first = rule.count === undefined ? firstPeriod(rule, s, ymd(from)) : 0;
  for (let period = first; ; period++) {
    if (opts.walked) opts.walked.periods++;
    // A rule that matches nothing for this long has no more dates (a bound on the work of one expansion).
    if (period - first > MAX_PERIODS) return out;
    // The first day a period can hold: past the end, nothing more can come.
    const dates = applySetPos(rule, candidates(rule, s, period, startDay));
    if (!dates.length && periodStart(rule, s, period) > endDay) return out;
    for (const x of dates) {
      if (x <= start) continue;
      if (x > end) return out;
      push(x);
      counted++;
      if ((rule.count !== undefined && counted >= rule.count) || out.length > limit) return out;
    }
    if (periodStart(rule, s, period) > endDay) return out;
  }
}

/** The most periods one expansion walks through (DAILY: some 270 years). */
export const MAX_PERIODS = 100_000;

/** A period a little before the one holding `from` (whole periods: the rule's dates are unchanged). */
function firstPeriod(rule: Rule, s: Ymd, from: Ymd): number {
  const days = dayNumber(fmt(from.y, from.m, from.d)) - dayNumber(fmt(s.y, s.m, s.d));
  const steps = {
    DAILY: days,
    WEEKLY: Math.floor(days / 7),
    MONTHLY: from.y * 12 + from.m - (s.y * 12 + s.m),
    YEARLY: from.y - s.y,
  }[rule.freq];
  return Math.max(0, Math.floor(steps / rule.interval) - 1);
}

/** The day number of the first day of a period (periods only move forward). */
function periodStart(rule: Rule, s: Ymd, period: number): number {
  const base = dayNumber(fmt(s.y, s.m, s.d));
  switch (rule.freq) {
    case 'DAILY':
      return base + period * rule.interval;
    case 'WEEKLY':
      return base - 7 + period * rule.interval * 7;
    case 'MONTHLY': {
      const index = s.y * 12 + (s.m - 1) + period * rule.interval;
      return dayNumber(fmt(Math.floor(index / 12), (index % 12) + 1, 1));
    }
    case 'YEARLY':
      return dayNumber(fmt(s.y + period * rule.interval, 1, 1));
  }
}

/** The rule's last date when it has one (COUNT or UNTIL), from `start`; undefined when it runs on. */
export function lastDate(rule: Rule, start: string): string | undefined {
  if (rule.until !== undefined) {
    const all = expand(rule, start, rule.until);
    return all[all.length - 1];
  }
  if (rule.count === undefined) return undefined;
  const all = expand(rule, start, '9999-12-31');
  return all[all.length - 1];
}
