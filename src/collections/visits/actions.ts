import { Readable } from 'node:stream';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import type { ActionDoc, Collection, RowOf } from '../machinery/collection.js';
import { PointSchema } from '../machinery/geo.js';
import { isPlainObject } from '../machinery/validate.js';
import { Answered, transition, type Step } from '../machinery/write/transition.js';
import { failure } from '../machinery/write/outcome.js';
import { billVisit } from '../../domain/maintenance/billing.js';
import { clockIn, clockOut } from '../../domain/crew-time/clock.js';
import type { Point } from './repository.js';

const point = TypeCompiler.Compile(PointSchema);

/**
 * The optional body `{"visits":[{"location":{lat,lng,accuracy}}]}`: the location, or the failure
 * that names what is wrong with it.
 */
function locationOf(
  c: Collection,
  body: unknown,
): { location: Point | null } | { failed: ApiErrorBody[]; item: unknown } {
  if (body instanceof Readable) throw new ApiError('unsupportedMediaType');
  if (body === undefined || body === null) return { location: null };
  const shape = `expected {"visits":[{"location":{"lat":…,"lng":…,"accuracy":…}}]} or no body`;
  if (!isPlainObject(body)) throw new ApiError('badCollectionBody', shape);
  const other = Object.keys(body).find((k) => k !== c.name);
  if (other !== undefined) throw new ApiError('wrongCollection', `'${other.slice(0, 64)}'; ${shape}`);
  const items = body[c.name];
  if (items === undefined) return { location: null };
  if (!Array.isArray(items) || items.length > 1) throw new ApiError('badCollectionBody', shape);
  if (!items.length) return { location: null };
  const item = items[0];
  if (!isPlainObject(item)) return { failed: [validationError('notAnObject', '')], item };
  const errors: ApiErrorBody[] = [];
  for (const key of Object.keys(item)) if (key !== 'location') errors.push(validationError('unknown', key));
  const loc = item.location;
  if (loc !== undefined && loc !== null && !point.Check(loc)) {
    const first = point.Errors(loc).First();
    const at = first?.path ? first.path.slice(1).replace(/\//g, '.') : '';
    errors.push(
      validationError(
        'invalid',
        at ? `location.${at}` : 'location',
        first ? first.message.toLowerCase() : 'invalid value',
      ),
    );
  }
  if (errors.length) return { failed: errors, item };
  return { location: (loc as Point | undefined) ?? null };
}

/** The body's location: checked by `parse`, read by `set` (a pure function of the body). */
function locationIn(visits: Collection, body: unknown): Point | null {
  const parsed = locationOf(visits, body);
  if ('failed' in parsed) throw new Answered({ status: 422, body: failure(visits, [parsed.item], [parsed.failed]) });
  return parsed.location;
}

const where = (location: Point | null) =>
  location ? JSON.stringify({ lat: location.lat, lng: location.lng, accuracy: location.accuracy ?? null }) : null;

/** What both steps declare (a Contractor locks only their own visits: the collection's read scope does it). */
const visitStep = {
  parse: ({ request }: Step<VisitRow>) => void locationIn(request.services.registry.get('visits')!, request.body),
  lock: 'no key update' as const,
  refusal: 'visitState' as const,
};

type VisitRow = RowOf<'visits'>;

/** The server's clock as a step reads it: never before the request's own time. */
const now = (caller: Step<VisitRow>['caller']) => () => Math.max(caller.now, (caller.clock ?? Date.now)());

/**
 * `POST /visits/:id/checkIn` (PRODUCT §11): `onSite`, the time (the server's clock) and location,
 * and its user's running `work` entry, in one transaction, each change an event.
 */
export const checkIn = transition<VisitRow>('visits', 'checkIn', {
  ...visitStep,
  from: ['scheduled', 'travelling'],
  needs: 'checkIn takes a scheduled or travelling visit',
  refuse: ({ row }) => (row.user_id === null ? 'the visit has no user to check in' : undefined),
  // Crew time (src/domain/crew-time/clock.ts): the user's time locked, then the entries.
  async first(step) {
    const { tx, row: visit, caller, changes } = step;
    const timesheets = changes.collection('timesheets');
    const work = await clockIn(tx, caller.accountId, { ...visit, user_id: visit.user_id! }, now(caller), (ids) =>
      changes.touch(timesheets, ids),
    );
    step.at = work.at;
    changes.created(timesheets, [work.started]);
  },
  set: ({ request, at }) => ({
    state: 'onSite',
    check_in_time: at,
    check_in_location: where(locationIn(request.services.registry.get('visits')!, request.body)),
  }),
});

/**
 * `POST /visits/:id/checkOut`: `completed`, the time and location; the visit's running entry ends
 * at the same instant. A visit of an agreement billed per visit makes its draft invoice (PRODUCT §16).
 */
export const checkOut = transition<VisitRow>('visits', 'checkOut', {
  ...visitStep,
  from: ['onSite'],
  needs: 'checkOut takes an onSite visit',
  async first(step) {
    const { tx, row: visit, caller, changes } = step;
    step.at = await clockOut(tx, caller.accountId, visit, now(caller), (ids) =>
      changes.touch(changes.collection('timesheets'), ids),
    );
  },
  set: ({ request, at }) => ({
    state: 'completed',
    check_out_time: at,
    check_out_location: where(locationIn(request.services.registry.get('visits')!, request.body)),
  }),
  then: ({ tx, changes, caller, row, at }) => billVisit(tx, changes, { ...caller, now: at }, row),
});

const body = {
  required: false,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          visits: {
            type: 'array',
            maxItems: 1,
            items: {
              type: 'object',
              additionalProperties: false,
              properties: { location: { anyOf: [PointSchema, { type: 'null' }] } },
            },
          },
        },
      },
    },
  },
};

export const visitActionDocs: Record<string, ActionDoc> = {
  checkIn: {
    on: 'item',
    summary: 'Check in at the visit (starts its running work entry)',
    description:
      "From `scheduled` or `travelling`, with a user: `state` becomes `onSite`, `checkInTime` now (server clock), `checkInLocation` the location sent (or null); a running `work` timesheet entry of the visit's user starts for the visit and its job, ending that user's running entry at the same instant. Otherwise 422 (1350), nothing changed.",
    requestBody: body,
  },
  checkOut: {
    on: 'item',
    summary: 'Check out of the visit (ends its running work entry)',
    description:
      "From `onSite`: `state` becomes `completed`, `checkOutTime` now, `checkOutLocation` the location sent (or null); the visit's entry ends at the same instant if still running. Otherwise 422 (1350), nothing changed.",
    requestBody: body,
  },
};
