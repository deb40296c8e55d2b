import { Type } from '@sinclair/typebox';
import { validationError } from '../../../errors.js';
import { decimalsOf } from '../money.js';
import type { Kind, ScalarField, ScalarOpts } from './kind.js';

/**
 * Why a location is invalid, or undefined when it is `{lat, lng}` (numbers in range, at most 7
 * decimals) or null: the one check of a point, wherever it is declared.
 */
export function locationProblem(v: unknown): string | undefined {
  if (v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) return 'must be an object {lat, lng} or null';
  const keys = Object.keys(v);
  const extra = keys.find((k) => k !== 'lat' && k !== 'lng');
  if (extra !== undefined) return `has no member '${extra.slice(0, 32)}' (only lat and lng)`;
  const { lat, lng } = v as { lat?: unknown; lng?: unknown };
  if (lat === undefined || lng === undefined) return 'needs both lat and lng (or null for none)';
  for (const [name, n, max] of [
    ['lat', lat, 90],
    ['lng', lng, 180],
  ] as const) {
    if (typeof n !== 'number' || !Number.isFinite(n)) return `${name} must be a number`;
    if (n < -max || n > max) return `${name} must be from -${max} to ${max}`;
    if (decimalsOf(n) > 7) return `${name} has more than 7 decimals`;
  }
  return undefined;
}

type Point = { lat: number; lng: number };

/**
 * A point on Earth, `{lat, lng}` or null (PRODUCT §10), in two columns, both stored or neither:
 * `column` the latitude, `lngColumn` the longitude, indexed with the account for `near`
 * (machinery/near.ts). Not compared by `where` or `sort` (`near` is how a place is asked for).
 */
export const location: Kind = {
  noun: 'a location',
  columns: (field) => [field.column, field.lngColumn!],
  toApi: () => (lat, lng) => (lat === null || lat === undefined ? null : { lat: Number(lat), lng: Number(lng) }),
  write: (field, value, row) => {
    const p = (value ?? null) as Point | null;
    row[field.column] = p === null ? null : p.lat;
    row[field.lngColumn!] = p === null ? null : p.lng;
  },
  problem: (_field, v) => locationProblem(v),
  restore: (field, value, row) => {
    const why = value === undefined ? undefined : locationProblem(value);
    if (why) return why;
    location.write(field, value, row);
    return undefined;
  },
};

const pointSchema = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude, at most 7 decimals.' }),
    lng: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude, at most 7 decimals.' }),
  },
  { additionalProperties: false },
);

export const locationFields = {
  /**
   * A point on Earth (see `location` above) in the columns `<prefix>_lat` and `<prefix>_lng`.
   * lat −90…90, lng −180…180, at most 7 decimals each: checked by `locationProblem`.
   */
  location: (prefix: string, opts: ScalarOpts = {}): ScalarField => ({
    kind: 'scalar',
    column: `${prefix}_lat`,
    lngColumn: `${prefix}_lng`,
    type: 'location',
    nullable: true,
    ...opts,
    valueSchema: pointSchema,
    schema: Type.Union([pointSchema, Type.Null()]),
  }),
  /**
   * A point `{lat, lng}` or null held whole as JSON text in one column (a user's `homeLocation`):
   * the rules of `location`, without its two indexed columns, for a place nothing filters by.
   */
  point: (column: string, opts: ScalarOpts = {}): ScalarField => ({
    kind: 'scalar',
    column,
    type: 'json',
    nullable: true,
    ...opts,
    check: (v: unknown, name: string) => {
      const why = locationProblem(v);
      return why ? [validationError('invalid', name, why)] : [];
    },
    valueSchema: pointSchema,
    schema: Type.Union([pointSchema, Type.Null()]),
  }),
};
