import { Type } from '@sinclair/typebox';
import { f } from './fields.js';

type Opts = NonNullable<Parameters<typeof f.number>[1]>;

/**
 * Where something is on the Earth, declared once: latitude −90…90, longitude −180…180 (WGS 84
 * degrees), accuracy in metres ≥ 0 or null. A location ping's columns and a visit's
 * check-in location (`{lat, lng, accuracy}`) both take their ranges from here.
 */
export const LAT = { minimum: -90, maximum: 90 };
export const LNG = { minimum: -180, maximum: 180 };
export const ACCURACY = { minimum: 0, maximum: 1e7 };

export const geo = {
  lat: (column: string, opts: Opts = {}) => f.number(column, { ...LAT, ...opts }),
  lng: (column: string, opts: Opts = {}) => f.number(column, { ...LNG, ...opts }),
  accuracy: (column: string, opts: Opts = {}) =>
    f.number(column, { ...ACCURACY, nullable: true, description: 'Metres (≥ 0), or null.', ...opts }),
};

/** `{lat, lng, accuracy}` (accuracy may be left out or null): one point as a value. */
export const PointSchema = Type.Object(
  {
    lat: Type.Number(LAT),
    lng: Type.Number(LNG),
    accuracy: Type.Optional(Type.Union([Type.Number(ACCURACY), Type.Null()])),
  },
  { additionalProperties: false },
);
