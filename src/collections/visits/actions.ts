import { Readable } from 'node:stream';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import type { ActionAnswer, ActionDoc, ActionRequest, Collection, Row } from '../machinery/collection.js';
import { PointSchema } from '../machinery/geo.js';
import { isPlainObject } from '../machinery/validate.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { failure } from '../machinery/write/outcome.js';
import { billVisit } from '../../domain/maintenance/billing.js';
import { lockUsersTime } from '../../domain/crew-time/locks.js';
import { endEntries, entriesFrom, lockVisit, markVisit, runningEntries, startEntry, type Point } from './repository.js';

const point = TypeCompiler.Compile(PointSchema);

type Step = 'checkIn' | 'checkOut';

/** How far ahead of this server's clock a running entry's start may be and still be ended now (+1 ms). */
const CLOCK_SLACK_MS = 1000;

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

/**
 * `POST /visits/:id/checkIn` and `/checkOut` (PRODUCT §11): the visit's state, time (the server's
 * clock) and location, and its user's running `work` entry, in one transaction, each change an event.
 */
function visitStep(step: Step) {
  return async function (request: ActionRequest): Promise<ActionAnswer> {
    if (request.item === undefined)
      throw new ApiError('unknownAction', `'${step}' applies to one visit: POST /visits/:id/${step}`);
    const id = request.item;
    const { caller, services } = request;
    const visits = services.registry.get('visits')!;
    const timesheets = services.registry.get('timesheets')!;
    const { accountId } = caller;
    let location: Point | null = null;
    let now = caller.now;
    const item = await services.writer.transact(caller, async (tx, changes) => {
      const visit = await lockVisit(tx, accountId, id);
      // A Contractor sees only their own visits: another one is missing, as when they read it.
      if (!visit || (caller.role === 'contractor' && visit.user_id !== caller.userId))
        throw new ApiError('itemNotFound');
      // The body is looked at once the visit is known to be the caller's to see (another account's is 404).
      const parsed = locationOf(visits, request.body);
      if ('failed' in parsed) throw new BadBody(failure(visits, [parsed.item], [parsed.failed]));
      location = parsed.location;
      if (visit.deleted) throw new ApiError('visitState', 'the visit is deleted');
      if (step === 'checkIn') {
        if (visit.state !== 'scheduled' && visit.state !== 'travelling')
          throw new ApiError('visitState', `checkIn takes a scheduled or travelling visit; this one is ${visit.state}`);
        if (visit.user_id === null) throw new ApiError('visitState', 'the visit has no user to check in');
      } else if (visit.state !== 'onSite')
        throw new ApiError('visitState', `checkOut takes an onSite visit; this one is ${visit.state}`);
      // Crew time's lock order (src/collections/policy.ts): the visit, then its user's time, then
      // the user's entries. "Now" is read once the user's time is ours: a check-in that waited for
      // another one starts after the entry that one started, never before it.
      if (visit.user_id !== null) await lockUsersTime(tx, accountId, [visit.user_id]);
      now = Math.max(caller.now, (caller.clock ?? Date.now)());
      if (step === 'checkIn') {
        const userId = visit.user_id!;
        // What the new entry [now, …) would overlap: the running entry, which it ends, and nothing else.
        let current = await entriesFrom(tx, accountId, userId, now);
        let running = current.filter((e) => e.end_time === null);
        // The check-in this one waited for started its entry in the same millisecond (or on a
        // server whose clock is a little ahead): this one begins just after it, not a 422.
        const latest = Math.max(...running.map((e) => e.start_time));
        if (running.length && latest >= now && latest - now < CLOCK_SLACK_MS) {
          now = latest + 1;
          current = current.filter((e) => e.end_time === null || e.end_time > now);
          running = current.filter((e) => e.end_time === null);
        }
        if (running.some((e) => e.start_time >= now))
          throw new ApiError('visitState', "the user's running timesheet entry starts later than now");
        if (current.length > running.length)
          throw new ApiError('visitState', "the new entry would overlap one of the user's later timesheet entries");
        if (running.length)
          await changes.touch(
            timesheets,
            running.map((e) => e.id),
          );
        await endEntries(tx, accountId, running, now);
        changes.created(timesheets, [await startEntry(tx, accountId, { ...visit, user_id: userId }, now)]);
      } else {
        const running = (await runningEntries(tx, accountId, { visitId: id })).filter((e) => e.start_time < now);
        if (running.length)
          await changes.touch(
            timesheets,
            running.map((e) => e.id),
          );
        await endEntries(tx, accountId, running, now);
      }
      // The visit as read under its lock is what it was before: no second read.
      await changes.touchRows(visits, [visit as unknown as Row]);
      await markVisit(tx, accountId, id, step, now, location);
      // PRODUCT §16: a visit of an agreement billed per visit makes its draft invoice (once).
      if (step === 'checkOut') await billVisit(tx, changes, { ...caller, now }, visit);
      await changes.settle();
      return changes.item(visits, id)!;
    });
    return { status: 200, body: { result: 'success', visits: [item], metadata: NO_ITEMS } };
  };
}

/** A body that fails validation: thrown in the transaction (nothing written), answered 422. */
class BadBody extends Error {
  constructor(readonly answer: unknown) {
    super('bad body');
  }
}

function answering(fn: (request: ActionRequest) => Promise<ActionAnswer>) {
  return async (request: ActionRequest): Promise<ActionAnswer> => {
    try {
      return await fn(request);
    } catch (err) {
      if (err instanceof BadBody) return { status: 422, body: err.answer };
      throw err;
    }
  };
}

export const checkIn = answering(visitStep('checkIn'));
export const checkOut = answering(visitStep('checkOut'));

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
