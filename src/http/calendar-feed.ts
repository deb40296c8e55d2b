import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { CALENDAR_PATH, calendarFeed } from '../collections/users/calendar.js';
import { enforceRateLimit } from './rate-limit.js';

/**
 * A user's calendar feed (PRODUCT §13): `GET /calendar/<token>.ics`, no bearer token, no
 * X-Version (calendar apps send neither). Rate-limited like the API, per feed. A strong ETag (the
 * digest of the bytes) lets a polling calendar app get 304 for an unchanged feed. Any wrong,
 * replaced or unlinked token is 404.
 */
export async function calendarFeedPlugin(app: FastifyInstance): Promise<void> {
  app.get(`${CALENDAR_PATH}/:file`, async (request, reply) => {
    const { file } = request.params as { file: string };
    const token = file.endsWith('.ics') ? file.slice(0, -4) : file;
    const bucket = `calendar:${crypto.createHash('sha256').update(token).digest('hex')}`;
    await enforceRateLimit(reply, app.rateLimits.api, bucket);
    const ics = await calendarFeed(app.services, token, app.clock());
    if (ics === undefined) throw new ApiError('itemNotFound', 'no such calendar feed');
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
  });
}
