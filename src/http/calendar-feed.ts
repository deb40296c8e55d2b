import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { CALENDAR_PATH, calendarFeed } from '../collections/users/calendar.js';
import { enforceRateLimit } from './rate-limit/index.js';

/** Whether a request's URL is under the feeds' path (`/calendar/…`), whatever follows. */
export const isCalendarPath = (url: string): boolean => url.startsWith(`${CALENDAR_PATH}/`);

/**
 * The one answer for every URL under `/calendar/` that is no feed: a wrong, replaced, unlinked or
 * malformed token, one too long for a route's parameter, badly percent-encoded, another method, a
 * deeper path. Always this 404, echoing nothing of the URL (the token is a secret, and a
 * 5,000-character one was once answered 405 with the path in the message).
 */
export const calendarNotFound = (): ApiError => new ApiError('itemNotFound', 'no such calendar feed');

/** The methods the API's router takes: each gets the same 404 under `/calendar/` but GET. */
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'] as const;

/**
 * A user's calendar feed (PRODUCT §13): `GET /calendar/<token>.ics`, no bearer token, no
 * X-Version (calendar apps send neither). Rate-limited like the API, per feed. A strong ETag (the
 * digest of the bytes) lets a polling calendar app get 304 for an unchanged feed. Anything else
 * under `/calendar/` is calendarNotFound: the route is a wildcard (a parameter has a length limit
 * past which the router would fall through to the API's routes), and the app's not-found and
 * bad-URL answers say the same (src/app.ts).
 */
export async function calendarFeedPlugin(app: FastifyInstance): Promise<void> {
  const feed = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'GET') throw calendarNotFound();
    const file = (request.params as { '*'?: string })['*'] ?? '';
    const token = file.endsWith('.ics') ? file.slice(0, -4) : file;
    const bucket = `calendar:${crypto.createHash('sha256').update(token).digest('hex')}`;
    await enforceRateLimit(reply, app.rateLimits.api, bucket);
    const ics = await calendarFeed(app.services, token, app.clock());
    if (ics === undefined) throw calendarNotFound();
    const etag = `"${crypto.createHash('sha256').update(ics).digest('base64url')}"`;
    reply.header('etag', etag).header('cache-control', 'private, no-cache');
    const inm = request.headers['if-none-match'];
    if (
      inm !== undefined &&
      String(inm)
        .split(/\s*,\s*/)
        .includes(etag)
    )
      return reply.code(304).send();
    return reply.code(200).header('content-type', 'text/calendar; charset=utf-8').send(ics);
  };
  app.route({ method: [...METHODS], url: `${CALENDAR_PATH}/*`, handler: feed });
}
