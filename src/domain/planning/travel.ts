/**
 * Travel between places (PRODUCT §15): the great-circle distance (the radius of §10) at
 * `TRAVEL_SPEED_KMH`, rounded up to the second; with `ROUTING_URL`, an OSRM-compatible `table`
 * service's durations instead, and when that fails (down, slow, an answer not of OSRM's form) the
 * great-circle times, said in `warnings`. Pure but for the one HTTP request to the operator's own
 * routing server; no database.
 */
export interface Place {
  lat: number;
  lng: number;
}

export interface TravelMatrix {
  /** Seconds from place i to place j (integers). */
  seconds: number[][];
  /** Kilometres from place i to place j (great circle, or the routing server's when it gives them). */
  km: number[][];
  warnings: string[];
}

export interface TravelOptions {
  speedKmh: number;
  routingUrl?: string;
  /** How long the routing server may take to answer (ms). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const EARTH_RADIUS_KM = 6371.0088;
const rad = (d: number) => (d * Math.PI) / 180;

/** The great-circle distance in km (haversine). */
export function greatCircleKm(a: Place, b: Place): number {
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Seconds to travel `km` at `speedKmh`, rounded up. */
export const travelSeconds = (km: number, speedKmh: number): number => Math.ceil((km / speedKmh) * 3600 - 1e-9);

/** Every pair's great-circle distance and time. */
export function greatCircleMatrix(places: Place[], speedKmh: number): TravelMatrix {
  const km = places.map((a) => places.map((b) => greatCircleKm(a, b)));
  return { km, seconds: km.map((row) => row.map((d) => travelSeconds(d, speedKmh))), warnings: [] };
}

/** OSRM caps a table's size by its `max-table-size` (100 by default); past it we do not ask. */
export const MAX_ROUTED_PLACES = 100;

/**
 * The matrix of `places`: from the routing server when there is one (OSRM's
 * `GET /table/v1/driving/{lng,lat;…}?annotations=duration,distance`), else, or when it fails, great
 * circle. Never throws.
 */
export async function travelMatrix(places: Place[], opts: TravelOptions): Promise<TravelMatrix> {
  const fallback = greatCircleMatrix(places, opts.speedKmh);
  if (!opts.routingUrl || places.length < 2) return fallback;
  if (places.length > MAX_ROUTED_PLACES)
    return { ...fallback, warnings: [`more than ${MAX_ROUTED_PLACES} places: great-circle travel times used`] };
  const coordinates = places.map((p) => `${p.lng.toFixed(7)},${p.lat.toFixed(7)}`).join(';');
  const url = `${opts.routingUrl}/table/v1/driving/${coordinates}?annotations=duration,distance`;
  const why = (reason: string) => ({
    ...fallback,
    warnings: [`the routing server (ROUTING_URL) ${reason}: great-circle travel times used`],
  });
  try {
    const res = await (opts.fetch ?? fetch)(url, { signal: AbortSignal.timeout(opts.timeoutMs ?? 5000) });
    if (!res.ok) return why(`answered ${res.status}`);
    const body = (await res.json()) as { code?: unknown; durations?: unknown; distances?: unknown };
    if (body.code !== 'Ok') return why(`answered code ${JSON.stringify(body.code ?? null).slice(0, 40)}`);
    const n = places.length;
    const square = (m: unknown): m is (number | null)[][] =>
      Array.isArray(m) &&
      m.length === n &&
      m.every(
        (row) =>
          Array.isArray(row) &&
          row.length === n &&
          row.every((v) => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0)),
      );
    if (!square(body.durations)) return why('answered a durations table of another shape');
    const durations = body.durations;
    // A pair the server cannot route (null) is left to great circle.
    const seconds = durations.map((row, i) => row.map((v, j) => (v === null ? fallback.seconds[i][j] : Math.ceil(v))));
    const km = square(body.distances)
      ? body.distances.map((row, i) => row.map((v, j) => (v === null ? fallback.km[i][j] : v / 1000)))
      : fallback.km;
    return { seconds, km, warnings: [] };
  } catch (err) {
    return why((err as Error).name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached');
  }
}
