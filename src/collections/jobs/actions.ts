import { Readable } from 'node:stream';
import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import type { Config } from '../../config.js';
import type { Executor } from '../../db/runner.js';
import { computeSlots, type SlotUser } from '../../domain/planning/slots.js';
import {
  MAX_ROUTED_PLACES,
  greatCircleKm,
  travelMatrix,
  travelSeconds,
  type Place,
} from '../../domain/planning/travel.js';
import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { instantMs, MAX_ID } from '../machinery/fields.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE, MAX_PAGE_SIZE } from '../machinery/modifiers.js';
import { isPlainObject } from '../machinery/validate.js';
import type { WriteFailure } from '../machinery/write/outcome.js';
import { lockUsersTime } from '../../domain/crew-time/locks.js';
import { remembered } from '../../db/memo.js';
import { busyTimes, slotJob, slotUsers, visitsVersion } from './repository.js';
import { accountZone } from '../machinery/money.js';

/** PRODUCT §15: from/to at most 31 days apart; duration and window 5–1440 minutes. */
const MAX_SPAN_MS = 31 * 86_400_000;
const MIN_MINUTES = 5;
const MAX_MINUTES = 1440;
export const DEFAULT_DURATION = 60;
export const DEFAULT_WINDOW = 120;
const QUARTER_MS = 15 * 60_000;
const MINUTE = 60_000;
/** How far either side of the asked span visits are read: a neighbour's travel reaches that far at most. */
const MARGIN_MS = 2 * 86_400_000;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const dateTime = (v: unknown): number | undefined =>
  typeof v === 'string' && ISO_WITH_OFFSET.test(v) ? instantMs(v) : undefined;
const iso = (ms: number) => new Date(ms).toISOString();

const itemOf = (request: ActionRequest, name: string): number => {
  if (request.item === undefined)
    throw new ApiError('unknownAction', `'${name}' applies to one job: /jobs/:id/${name}`);
  return request.item;
};

/** The job slots are asked for: its place and skills; 404 when missing, 422 (1280) without a place. */
async function jobOf(db: Executor, accountId: number, id: number) {
  const job = await slotJob(db, accountId, id);
  if (!job) throw new ApiError('itemNotFound');
  if (job.deleted) throw new ApiError('stateForbids', 'the job is deleted');
  if (!job.place) throw new ApiError('stateForbids', "the job has no address.location: slots need the job's place");
  return { place: job.place, skills: job.skills };
}

/**
 * Seconds between places: the travel matrix of `places` (ROUTING_URL's, or great circle), and for
 * a place it does not hold (a visit that appeared meanwhile) great circle.
 */
async function travelOf(places: Place[], config: Config): Promise<(a: Place, b: Place) => number> {
  const key = (p: Place) => `${p.lat},${p.lng}`;
  const index = new Map<string, number>();
  const unique: Place[] = [];
  for (const p of places)
    if (!index.has(key(p))) {
      index.set(key(p), unique.length);
      unique.push(p);
    }
  const speedKmh = config.travelSpeedKmh;
  const greatCircle = (a: Place, b: Place) => travelSeconds(greatCircleKm(a, b), speedKmh);
  // Without a routing server (or past its table's size) a pair's time is computed when asked:
  // slots over a fortnight ask for a few pairs of thousands of places, never the whole square.
  if (!config.routingUrl || unique.length > MAX_ROUTED_PLACES) return greatCircle;
  const m = await travelMatrix(unique, { speedKmh, routingUrl: config.routingUrl });
  return (a, b) => {
    const i = index.get(key(a));
    const j = index.get(key(b));
    return i !== undefined && j !== undefined ? m.seconds[i][j] : greatCircle(a, b);
  };
}

const placesOf = (job: Place, users: SlotUser[], visits: { place: Place | null }[]): Place[] => [
  job,
  ...users.flatMap((u) => (u.home ? [u.home] : [])),
  ...visits.flatMap((v) => (v.place ? [v.place] : [])),
];

/** A query parameter given once, or undefined; 400 when repeated. */
function param(query: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new ApiError('badModifier', `${name} is given more than once`);
  return v;
}

function intParam(
  query: Readonly<Record<string, unknown>>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = param(query, name);
  if (raw === undefined) return fallback;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) throw new ApiError('badModifier', `${name} must be an integer from ${min} to ${max}`);
  return n;
}

interface SlotsQuery {
  from: number;
  to: number;
  duration: number;
  window: number;
  page: number;
  recordsPerPage: number;
}

/** `from`, `to` (required date-times, at most 31 days apart), `duration`, `window`, `page`, `recordsPerPage`: 400 naming any bad one. */
export function parseSlotsQuery(query: Readonly<Record<string, unknown>>): SlotsQuery {
  const known = ['from', 'to', 'duration', 'window', 'page', 'recordsPerPage'];
  for (const k of Object.keys(query))
    if (!known.includes(k))
      throw new ApiError(
        'badModifier',
        `unknown query parameter '${k.slice(0, 64)}' (slots take from, to, duration, window, page and recordsPerPage)`,
      );
  const instant = (name: string) => {
    const raw = param(query, name);
    if (raw === undefined) throw new ApiError('badModifier', `${name} is required: a date-time with offset`);
    const ms = dateTime(raw);
    if (ms === undefined)
      throw new ApiError('badModifier', `${name} must be a date-time with offset, as 2030-05-01T08:00:00Z`);
    return ms;
  };
  const from = instant('from');
  const to = instant('to');
  if (!(to > from)) throw new ApiError('badModifier', 'to must be after from');
  if (to - from > MAX_SPAN_MS) throw new ApiError('badModifier', 'to must be at most 31 days after from');
  return {
    from,
    to,
    duration: intParam(query, 'duration', DEFAULT_DURATION, MIN_MINUTES, MAX_MINUTES),
    window: intParam(query, 'window', DEFAULT_WINDOW, MIN_MINUTES, MAX_MINUTES),
    page: intParam(query, 'page', 1, 1, MAX_PAGE),
    recordsPerPage: intParam(query, 'recordsPerPage', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE),
  };
}

/**
 * `GET /jobs/:id/slots` (PRODUCT §15): the arrival windows a new visit of the job can be promised
 * without moving any visit, for every user of the account with working hours and the job's skills.
 */
export async function slots(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'slots');
  const { caller, services } = request;
  const db = services.database.db;
  const q = parseSlotsQuery(request.query);
  // Windows already begun are not offered: from is at least now. Windows start on a local hour,
  // a quarter hour of UTC in every zone, so from the next quarter on the answer is the same.
  const from = Math.max(q.from, Math.ceil(caller.now / QUARTER_MS) * QUARTER_MS);
  // The job and the zone are read only when the answer is made: a remembered answer is kept while
  // no job changed (a deleted or moved job is read again, and refused), and the zone is fixed at
  // the account's creation.
  const compute = async () => {
    const job = await jobOf(db, caller.accountId, id);
    const timeZone = await accountZone(db, caller.accountId);
    const users = await slotUsers(db, caller.accountId);
    const skilled = users.filter((u) => job.skills.every((s) => u.skills.includes(s)));
    const busy = await busyTimes(
      db,
      caller.accountId,
      skilled.map((u) => u.id),
      from - MARGIN_MS,
      q.to + MARGIN_MS,
    );
    const travel = await travelOf(placesOf(job.place, skilled, busy.visits), services.config);
    return from < q.to
      ? computeSlots({
          place: job.place,
          skills: job.skills,
          users: skilled,
          ...busy,
          timeZone,
          travel,
          from,
          to: q.to,
          durationMinutes: q.duration,
          windowMinutes: q.window,
        })
      : [];
  };
  // Remembered (src/db/memo.ts) while no visit, user, leave, job or skill of the account changed:
  // a booking page asking again for the same fortnight costs one statement of versions.
  const all = services.config.rememberAnswers
    ? await remembered(
        db,
        'visits',
        caller.accountId,
        `slots|${id}|${from}|${q.to}|${q.duration}|${q.window}`,
        async () => {
          // Read before the rows: a change meanwhile leaves the value under an older version, never a newer one.
          const version = await visitsVersion(db, caller.accountId);
          return { value: await compute(), version };
        },
        (value) => 64 + value.length * 48,
        ['users', 'unavailabilities', 'jobs', 'skills'],
      )
    : await compute();
  const offset = (q.page - 1) * q.recordsPerPage;
  return {
    status: 200,
    body: {
      result: 'success',
      slots: all.slice(offset, offset + q.recordsPerPage).map((s) => ({
        arrivalWindowStart: iso(s.arrivalWindowStart),
        arrivalWindowEnd: iso(s.arrivalWindowEnd),
        user: { id: s.userId },
        travelSeconds: s.travelSeconds,
      })),
      metadata: {
        page: q.page,
        pagesCount: Math.ceil(all.length / q.recordsPerPage),
        recordsPerPage: q.recordsPerPage,
        recordsCount: all.length,
      },
    },
  };
}

interface Booking {
  start: number;
  end: number;
  userId: number;
  duration: number;
}

/** The one slot of a booking's body, or the failure envelope naming what is wrong (`slots[0].user`). */
function bookingOf(body: unknown): Booking | { failed: WriteFailure } {
  if (body instanceof Readable) throw new ApiError('unsupportedMediaType');
  const shape = 'expected {"slots":[{"arrivalWindowStart","arrivalWindowEnd","user":{"id"},"duration"}]}, one slot';
  if (!isPlainObject(body)) throw new ApiError('badCollectionBody', shape);
  const other = Object.keys(body).find((k) => k !== 'slots');
  if (other !== undefined) throw new ApiError('wrongCollection', `'${other.slice(0, 64)}'; ${shape}`);
  const items = body.slots;
  if (!Array.isArray(items) || items.length !== 1) throw new ApiError('badCollectionBody', shape);
  const item = items[0];
  const fail = (errors: ApiErrorBody[]): { failed: WriteFailure } => ({
    failed: {
      result: 'failure',
      failures: [{ rawData: item, errors }],
      metadata: { receivedItemsCount: 1, validItems: [], invalidItems: [0] },
    },
  });
  if (!isPlainObject(item)) return fail([validationError('notAnObject', 'slots[0]')]);
  const errors: ApiErrorBody[] = [];
  const at = (k: string) => `slots[0].${k}`;
  for (const k of Object.keys(item))
    if (!['arrivalWindowStart', 'arrivalWindowEnd', 'user', 'duration'].includes(k))
      errors.push(validationError('unknown', at(k)));
  const instant = (k: string) => {
    if (item[k] === undefined) return void errors.push(validationError('required', at(k)));
    const ms = dateTime(item[k]);
    if (ms === undefined) errors.push(validationError('invalid', at(k), 'must be a date-time with offset'));
    return ms;
  };
  const start = instant('arrivalWindowStart');
  const end = instant('arrivalWindowEnd');
  if (start !== undefined && end !== undefined) {
    const minutes = (end - start) / MINUTE;
    if (!(Number.isInteger(minutes) && minutes >= MIN_MINUTES && minutes <= MAX_MINUTES))
      errors.push(
        validationError(
          'invalid',
          at('arrivalWindowEnd'),
          `the window must be a whole number of minutes from ${MIN_MINUTES} to ${MAX_MINUTES} after arrivalWindowStart`,
        ),
      );
  }
  const user = item.user;
  let userId: number | undefined;
  if (user === undefined) errors.push(validationError('required', at('user')));
  else if (
    !isPlainObject(user) ||
    !Number.isInteger(user.id) ||
    (user.id as number) < 1 ||
    (user.id as number) > MAX_ID ||
    Object.keys(user).some((k) => k !== 'id')
  )
    errors.push(validationError('invalid', at('user'), 'must be {"id": <a user id>}'));
  else userId = user.id as number;
  const duration = item.duration ?? DEFAULT_DURATION;
  if (!Number.isInteger(duration) || (duration as number) < MIN_MINUTES || (duration as number) > MAX_MINUTES)
    errors.push(validationError('invalid', at('duration'), `must be an integer from ${MIN_MINUTES} to ${MAX_MINUTES}`));
  if (errors.length) return fail(errors);
  return { start: start!, end: end!, userId: userId!, duration: duration as number };
}

/**
 * Whether the booking's window is offered to its user now, reading through `db` (in the
 * booking's transaction, under the lock on the user's time: what committed before it).
 */
async function offered(
  db: Executor,
  config: Config,
  accountId: number,
  job: { place: Place; skills: number[] },
  b: Booking,
  except?: number,
  travel?: (a: Place, b: Place) => number,
): Promise<{ ok: boolean; why: string; places: Place[] }> {
  const [timeZone, users] = await Promise.all([accountZone(db, accountId), slotUsers(db, accountId, b.userId)]);
  const user = users[0];
  if (!user) return { ok: false, why: 'the user has no working hours (or is deleted)', places: [] };
  if (!job.skills.every((s) => user.skills.includes(s)))
    return { ok: false, why: 'the user lacks a skill the job requires', places: [] };
  const busy = await busyTimes(db, accountId, [user.id], b.start - MARGIN_MS, b.end + MARGIN_MS, except);
  const places = placesOf(job.place, [user], busy.visits);
  const found = computeSlots({
    place: job.place,
    skills: job.skills,
    users: [user],
    ...busy,
    timeZone,
    travel: travel ?? (await travelOf(places, config)),
    from: b.start,
    to: b.end,
    durationMinutes: b.duration,
    windowMinutes: (b.end - b.start) / MINUTE,
  }).some((s) => s.arrivalWindowStart === b.start);
  return {
    ok: found,
    why: 'the slot is not offered: outside working hours or not on the hour, or it meets leave, another visit or its travel',
    places,
  };
}

/**
 * `POST /jobs/:id/book` (PRODUCT §15): the visit of one offered slot, created through the write
 * pipeline; the slot is checked again in the same transaction, under the lock on the user's time
 * (src/collections/policy.ts), so of two bookings racing for it one is refused (422, 1280) and
 * writes nothing.
 */
export async function book(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'book');
  const { caller, services } = request;
  if (!caller.permissions.has('visits.write')) throw new ApiError('permissionMissing', 'visits.write');
  const db = services.database.db;
  const job = await jobOf(db, caller.accountId, id);
  const parsed = bookingOf(request.body);
  if ('failed' in parsed) return { status: 422, body: parsed.failed };
  const b = parsed;
  // First without a lock: a slot not offered at all is refused before anything is written.
  const before = await offered(db, services.config, caller.accountId, job, b);
  if (!before.ok) throw new ApiError('stateForbids', before.why);
  // The travel of the places known now; a place that appears meanwhile is taken at great circle.
  const travel = await travelOf(before.places, services.config);
  const visits = services.registry.get('visits')!;
  const result = await services.writer.write({
    collection: visits,
    caller,
    op: 'create',
    input: [
      {
        job: { id },
        user: { id: b.userId },
        label: 'Visit',
        startTime: iso(b.start),
        endTime: iso(b.start + b.duration * MINUTE),
        arrivalWindowStart: iso(b.start),
        arrivalWindowEnd: iso(b.end),
      },
    ],
    // In the write's transaction, once the visit is written: the user's time locked, the slot
    // checked again against what committed before (the new visit itself aside).
    async seal(tx, written) {
      await lockUsersTime(tx, caller.accountId, [b.userId]);
      const now = await offered(tx, services.config, caller.accountId, job, b, written.items[0].id as number, travel);
      if (!now.ok) throw new ApiError('stateForbids', `the slot was just taken: ${now.why}`);
    },
  });
  if (result.result === 'failure') return { status: 422, body: result };
  return { status: 200, body: { result: 'success', visits: result.items, metadata: result.metadata } };
}

const SLOT = {
  type: 'object',
  additionalProperties: false,
  required: ['arrivalWindowStart', 'arrivalWindowEnd', 'user', 'travelSeconds'],
  properties: {
    arrivalWindowStart: { type: 'string', format: 'date-time' },
    arrivalWindowEnd: { type: 'string', format: 'date-time' },
    user: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: { type: 'integer' } },
    },
    travelSeconds: { type: 'integer', minimum: 0 },
  },
};

const query = (name: string, description: string, schema: Record<string, unknown>, required = false) => ({
  name,
  in: 'query',
  required,
  description,
  schema,
});

export const jobActionDocs: Record<string, ActionDoc> = {
  slots: {
    on: 'item',
    summary: 'The arrival windows a new visit of the job can be promised',
    description:
      "GET. The windows (starting on the account's local hour) a new visit of the job can be promised without moving any visit, for every user with working hours and the job's required skills: the visit fits whichever moment of the window the crew arrives (working hours, leave, the travel from the visit before and to the visit after, or from and to home). Ordered by start, then by the travel the visit adds. Paged as lists. A job without `address.location`: 422 (1280). Administrators and Employees; Contractors 403.",
    parameters: [
      query(
        'from',
        'Windows start at or after this date-time (and not before now).',
        { type: 'string', format: 'date-time' },
        true,
      ),
      query(
        'to',
        'Windows end at or before this date-time; at most 31 days after `from`.',
        { type: 'string', format: 'date-time' },
        true,
      ),
      query('duration', 'The visit, in minutes (5–1440, default 60).', { type: 'integer', minimum: 5, maximum: 1440 }),
      query('window', 'The arrival window, in minutes (5–1440, default 120).', {
        type: 'integer',
        minimum: 5,
        maximum: 1440,
      }),
      query('page', 'The page (from 1).', { type: 'integer', minimum: 1 }),
      query('recordsPerPage', 'Slots per page (1–1000, default 50).', { type: 'integer', minimum: 1, maximum: 1000 }),
    ],
    response: {
      type: 'object',
      required: ['result', 'slots', 'metadata'],
      properties: {
        result: { const: 'success' },
        slots: { type: 'array', items: SLOT },
        metadata: { $ref: '#/components/schemas/ListMetadata' },
      },
    },
  },
  book: {
    on: 'item',
    answers: 'visits',
    summary: 'Book an offered slot as a new visit of the job',
    description:
      "Creates the visit of one slot (label `Visit`, the user, the window as `arrivalWindowStart`/`End`, `startTime` the window's start, `endTime` that plus `duration` minutes, default 60), after checking the slot is still offered, in the same transaction under a lock on the user's time. A slot not offered (taken meanwhile): 422 (1280), nothing written. A bad member: the failure envelope naming it (`slots[0].user`). Administrators and Employees with `visits.write`; Contractors 403.",
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            additionalProperties: false,
            required: ['slots'],
            properties: {
              slots: {
                type: 'array',
                minItems: 1,
                maxItems: 1,
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['arrivalWindowStart', 'arrivalWindowEnd', 'user'],
                  properties: {
                    arrivalWindowStart: { type: 'string', format: 'date-time' },
                    arrivalWindowEnd: { type: 'string', format: 'date-time' },
                    user: SLOT.properties.user,
                    duration: { type: 'integer', minimum: 5, maximum: 1440, default: 60 },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};
