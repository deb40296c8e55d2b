import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { ApiError } from '../../errors.js';
import type { Collection, EB } from './collection.js';
import { DISTANCE } from './fields.js';
import { KINDS, kindOf } from './kinds/index.js';

/**
 * `near=<lat>,<lng>[,<radiusKm>]` (PRODUCT §10): the items whose address has a location, within
 * the radius when one is given, each with its great-circle `distance` in km (3 decimals), nearest
 * first unless the list is sorted.
 *
 * How it finds them without reading every row of the account: a bounding box of the circle on the
 * latitude (the index `(account_id, address_lat)` every located table has) and the longitude, then
 * the exact haversine distance in SQL. The same SQL runs on both databases (SQLite's math
 * functions are compiled into better-sqlite3; PostgreSQL has them built in): no extension needed.
 */
export interface Near {
  lat: number;
  lng: number;
  radiusKm?: number;
  /** No `sort` was given: nearest first, ties by id. */
  nearestFirst: boolean;
}

/** The mean Earth radius (IUGG), in km. */
export const EARTH_RADIUS_KM = 6371.0088;

const bad = (why: string) => new ApiError('badModifier', `near: ${why}`);
const NUMBER = '-?\\d+(?:\\.\\d+)?';
const FORM = new RegExp(`^(${NUMBER}),(${NUMBER})(?:,(\\d+(?:\\.\\d+)?))?$`);

/** The latitude and longitude columns of the collection's location, when it has one. */
export function locationColumns(c: Collection): { lat: string; lng: string } | undefined {
  for (const field of Object.values(c.fields)) {
    if (field.kind !== 'object') continue;
    for (const m of Object.values(field.members))
      if (kindOf(m) === KINDS.location) return { lat: m.column, lng: m.lngColumn! };
  }
  return undefined;
}

export function parseNear(c: Collection, raw: string, sorted: boolean): Near {
  if (!locationColumns(c) || c.fields.distance?.kind !== 'computed') throw bad(`${c.name} have no location`);
  // Spaces around the commas are allowed, none inside a number.
  const m = FORM.exec(
    raw
      .split(',')
      .map((p) => p.trim())
      .join(','),
  );
  if (!m) throw bad('must be <lat>,<lng> or <lat>,<lng>,<radiusKm>: decimal numbers, the radius not negative');
  const [lat, lng] = [Number(m[1]), Number(m[2])];
  if (!(lat >= -90 && lat <= 90)) throw bad('the latitude must be from -90 to 90');
  if (!(lng >= -180 && lng <= 180)) throw bad('the longitude must be from -180 to 180');
  const radiusKm = m[3] === undefined ? undefined : Number(m[3]);
  if (radiusKm !== undefined && !Number.isFinite(radiusKm)) throw bad('the radius is too large');
  return { lat, lng, radiusKm, nearestFirst: !sorted };
}

const rad = (deg: number) => (deg * Math.PI) / 180;
const deg = (r: number) => (r * 180) / Math.PI;
const num = (n: number) => sql<number>`cast(${n} as double precision)`;

/** The exact great-circle distance in km from the point to the row's location (haversine). */
function exact(c: Collection, near: Near): RawBuilder<number> {
  const cols = locationColumns(c)!;
  const lat = sql.ref(`${c.table}.${cols.lat}`);
  const lng = sql.ref(`${c.table}.${cols.lng}`);
  const h = sql`(power(sin(radians(${lat} - ${num(near.lat)}) / 2), 2) + ${num(Math.cos(rad(near.lat)))} * cos(radians(${lat})) * power(sin(radians(${lng} - ${num(near.lng)}) / 2), 2))`;
  // Rounding may take h a hair past 1 for antipodal points, where asin is undefined.
  return sql<number>`(${num(2 * EARTH_RADIUS_KM)} * asin(sqrt(case when ${h} > 1 then 1 else ${h} end)))`;
}

/** The distance as answered: km rounded to 3 decimals (the same arithmetic on both databases). */
export const distanceColumn = (c: Collection, near: Near) =>
  sql<number>`floor(${exact(c, near)} * 1000 + 0.5) / 1000`.as(DISTANCE);

/** Degrees of slack on the box: the exact distance decides, the box must only never cut a match. */
const SLACK = 1e-6;

/** The rows near the point: located, inside the bounding box of the circle, within the radius. */
export function nearCondition(c: Collection, near: Near, eb: EB): Expression<SqlBool> {
  const cols = locationColumns(c)!;
  const lat = `${c.table}.${cols.lat}`;
  const lng = `${c.table}.${cols.lng}`;
  const parts: Expression<SqlBool>[] = [eb(lat, 'is not', null), eb(lng, 'is not', null)];
  if (near.radiusKm === undefined) return eb.and(parts);
  const angle = near.radiusKm / EARTH_RADIUS_KM;
  if (angle < Math.PI) {
    const dLat = deg(angle) + SLACK;
    const [south, north] = [near.lat - dLat, near.lat + dLat];
    parts.push(eb(lat, '>=', num(Math.max(-90, south))), eb(lat, '<=', num(Math.min(90, north))));
    // A circle holding a pole spans every longitude; otherwise its widest longitude (Matuschek).
    const ratio = south > -90 && north < 90 ? Math.sin(angle) / Math.cos(rad(near.lat)) : 2;
    if (ratio < 1) {
      const dLng = deg(Math.asin(ratio)) + SLACK;
      const [west, east] = [near.lng - dLng, near.lng + dLng];
      // Across the antimeridian the box is two ranges of longitude.
      if (west < -180) parts.push(eb.or([eb(lng, '>=', num(west + 360)), eb(lng, '<=', num(east))]));
      else if (east > 180) parts.push(eb.or([eb(lng, '>=', num(west)), eb(lng, '<=', num(east - 360))]));
      else parts.push(eb(lng, '>=', num(west)), eb(lng, '<=', num(east)));
    }
  }
  parts.push(eb(exact(c, near), '<=', num(near.radiusKm)));
  return eb.and(parts);
}

/** Nearest first: the rounded distance (as answered), then id. */
export const nearestOrder = () => sql.ref(DISTANCE);
