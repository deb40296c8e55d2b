import { Type } from '@sinclair/typebox';
import { validationError, type ApiErrorBody } from '../../errors.js';
import type { ScalarField } from './fields.js';
import { minutesOf } from '../../time/local-time.js';
import { isPlainObject } from './validate.js';

/**
 * A user's `workingHours` (PRODUCT §15), one value kind: at most 14 intervals `{day, start, end}`
 * in the account's time zone, day names in lower case, times `HH:MM` from 00:00 to 23:59, start
 * before end, the intervals of one day not overlapping (they may touch). Stored as JSON text;
 * every failure names the field.
 */
export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Day = (typeof DAYS)[number];
export interface Interval {
  day: Day;
  start: string;
  end: string;
}
export const MAX_INTERVALS = 14;
const HHMM = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
const TIME = new RegExp(HHMM);

const intervalSchema = Type.Object(
  {
    day: Type.Union(DAYS.map((d) => Type.Literal(d))),
    start: Type.String({ pattern: HHMM, description: '`HH:MM`, 00:00–23:59.' }),
    end: Type.String({ pattern: HHMM, description: '`HH:MM`, after `start`.' }),
  },
  { additionalProperties: false },
);

/** Why a value is not working hours, or undefined. */
export function workingHoursProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'must be an array of {day, start, end}';
  if (value.length > MAX_INTERVALS) return `at most ${MAX_INTERVALS} intervals`;
  const byDay = new Map<string, [number, number][]>();
  for (const [i, v] of value.entries()) {
    if (!isPlainObject(v)) return `[${i}] must be an object {day, start, end}`;
    const extra = Object.keys(v).find((k) => k !== 'day' && k !== 'start' && k !== 'end');
    if (extra !== undefined) return `[${i}] has an unknown member '${extra.slice(0, 64)}'`;
    if (!(DAYS as readonly unknown[]).includes(v.day)) return `[${i}].day must be one of ${DAYS.join(', ')}`;
    for (const m of ['start', 'end'])
      if (typeof v[m] !== 'string' || !TIME.test(v[m] as string))
        return `[${i}].${m} must be HH:MM from 00:00 to 23:59`;
    const start = minutesOf(v.start as string);
    const end = minutesOf(v.end as string);
    if (!(start < end)) return `[${i}]: start must be before end`;
    const day = byDay.get(v.day as string) ?? [];
    if (day.some(([s, e]) => start < e && s < end)) return `[${i}] overlaps another interval of ${v.day as string}`;
    day.push([start, end]);
    byDay.set(v.day as string, day);
  }
  return undefined;
}

export function workingHoursField(column: string, opts: { description?: string } = {}): ScalarField {
  const schema = Type.Array(intervalSchema, { maxItems: MAX_INTERVALS });
  return {
    kind: 'scalar',
    column,
    type: 'json',
    schema,
    valueSchema: schema,
    check: (value: unknown, name: string): ApiErrorBody[] => {
      const why = workingHoursProblem(value);
      return why ? [validationError('invalid', name, why)] : [];
    },
    description: opts.description,
  };
}
