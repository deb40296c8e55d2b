import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import { authenticate } from '../auth/bearer.js';
import type { AuthContext } from '../auth/context.js';
import {
  type ActionRequest,
  type Caller,
  type Collection,
  type MultipartPart,
} from '../collections/machinery/collection.js';
import { parseListQuery } from '../collections/machinery/modifiers.js';
import { gate } from '../collections/machinery/access.js';
import { list } from '../collections/machinery/read.js';
import { rememberedList } from '../collections/machinery/answers.js';
import { isPlainObject } from '../collections/machinery/validate.js';
import { isItemId } from '../collections/machinery/fields.js';
import { checkUntaggedIfMatch } from '../collections/machinery/write/if-match.js';
import { API_VERSION } from './envelope.js';
import { listAnswer } from './serialize.js';
import { readItem, sendAnswer, writeItems } from './conditional.js';
import { ApiError } from '../errors.js';
import { badPercentEncoding } from './input/url-encoding.js';
import { openRetry, type Answer } from './idempotency/index.js';
import { purgeInBackground } from './idempotency/purge.js';
import { enforceRateLimit, tokenBucket } from './rate-limit/index.js';
import { MAX_JSON_DEPTH, jsonHasLoneSurrogate, jsonHasNul, jsonTooDeep } from './input/json-depth.js';
import { at, firstInvalidUtf8, jsonSyntaxError } from './input/json-syntax.js';
import { allowedMethods, effectiveMethod, notFoundOr405, parsePath, type ApiRoute } from './route.js';
import { EventStreams, wantsStream } from './event-stream.js';
import { isSummary, summaryAnswer } from './summary.js';

export const JSON_BODY_LIMIT = 1024 * 1024;

// Fatal: malformed UTF-8 is malformed JSON (RFC 8259 §8.1), decided here, never replaced by U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON request body: UTF-8, at most MAX_JSON_DEPTH deep, no U+0000; errors say where it broke. */
export function parseJsonBody(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    const bad = firstInvalidUtf8(buf);
    const pos = at(buf.subarray(0, bad).toString('utf8'), bad, '');
    const byte =
      buf[bad] === undefined
        ? 'a truncated sequence'
        : `byte 0x${buf[bad].toString(16).toUpperCase().padStart(2, '0')}`;
    throw new ApiError(
      'malformedJson',
      `it is not valid UTF-8 (${byte} at byte offset ${bad}, line ${pos.line}, column ${pos.column})`,
    );
  }
  if (jsonTooDeep(text)) throw new ApiError('malformedJson', `nested deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const e = jsonSyntaxError(text);
    throw new ApiError(
      'malformedJson',
      e ? `expected ${e.expected} at line ${e.line}, column ${e.column} (offset ${e.offset})` : undefined,
    );
  }
  if (jsonHasNul(text, parsed)) throw new ApiError('malformedJson', 'text must not contain U+0000');
  if (jsonHasLoneSurrogate(text, parsed))
    throw new ApiError('malformedJson', 'text must not contain a lone surrogate (\\uD800 to \\uDFFF outside a pair)');
  return parsed;
}

/** A header as one value; sent more than once, its values joined as one list (RFC 9110 §5.3). */
const header = (request: FastifyRequest, name: string): string | undefined => {
  const v = request.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

function checkVersion(v: string | string[] | undefined): void {
  if (v === undefined || v === '') throw new ApiError('versionMissing');
  if (v !== API_VERSION) throw new ApiError('versionUnsupported');
}

/** The items of a write body `{<collection>: [...]}`; another collection's name is error 1247. */
function bodyItems(c: Collection, route: ApiRoute, method: string, body: unknown): unknown[] {
  if (body instanceof Readable) throw new ApiError('unsupportedMediaType');
  if (body === undefined && method === 'DELETE' && route.item !== undefined) return [{ id: route.item }];
  const shape = `expected {"${c.name}":[{...}, ...]}`;
  if (!isPlainObject(body)) throw new ApiError('badCollectionBody', shape);
  const other = Object.keys(body).find((k) => k !== c.name);
  if (other !== undefined) {
    // A bare item ({"title": ...}) is the usual mistake: say so, and what the wrapper looks like.
    const hint =
      Object.hasOwn(c.fields, other) || other === 'id'
        ? `; '${other.slice(0, 64)}' is a field of ${c.name}: items go inside the collection, as {"${c.name}":[{"${other.slice(0, 64)}":...}]}`
        : `; ${shape}`;
    throw new ApiError('wrongCollection', `'${other.slice(0, 64)}' sent to /${c.name}${hint}`);
  }
  const items = body[c.name];
  if (!Array.isArray(items)) throw new ApiError('badCollectionBody', `'${c.name}' is not an array; ${shape}`);
  if (route.item === undefined) return items;
  // Item endpoints take a collection too; its items name that item, or no id at all.
  return items.map((it) => (isPlainObject(it) && it.id === undefined ? { ...it, id: route.item } : it));
}

/** A `Content-Length` as a number of bytes, when it is one. */
function declaredLength(header: string | undefined): number | undefined {
  const n = Number(header);
  return header !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** What an action sees of the request: no framework objects, no headers. */
function actionRequest(
  request: FastifyRequest,
  caller: Caller,
  item: number | undefined,
  services: ActionRequest['services'],
): ActionRequest {
  return {
    caller,
    item,
    contentType: request.headers['content-type'],
    declaredLength: declaredLength(request.headers['content-length']),
    query: request.query as Record<string, unknown>,
    body: request.body,
    parts: request.isMultipart() ? (limits) => request.parts({ limits }) as AsyncIterable<MultipartPart> : undefined,
    services,
  };
}

export async function apiPlugin(app: FastifyInstance): Promise<void> {
  // Bodies of every type reach the handler: JSON parsed (with our error), anything else as a stream
  // that only actions such as /files/upload consume.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: JSON_BODY_LIMIT }, (_req, buf, done) => {
    try {
      done(null, parseJsonBody(buf as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  // multipart/form-data is left unread too: actions pull its parts as streams (request.parts()),
  // setting their own size limits per request.
  await app.register(multipart);

  const streams = new EventStreams(app);
  app.addHook('preClose', async () => streams.close());

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    // Another method of one of the app's own routes (GET /oauth2/token, PUT /openapi.json).
    if (app.routeMethods(request.url.split('?')[0]).length) throw notFoundOr405(app, request.method, request.url);
    const route = parsePath(request.url);
    if (!route) throw notFoundOr405(app, request.method, request.url);
    checkVersion(request.headers['x-version']);
    const q = request.url.indexOf('?');
    const badQuery = q === -1 ? undefined : badPercentEncoding(request.url.slice(q + 1));
    if (badQuery) throw new ApiError('badEncoding', `the query string: ${badQuery}`);
    const method = effectiveMethod(request.method, request.headers['x-method']);
    const auth = await authenticate(app.database, request.headers.authorization, app.clock());
    await enforceRateLimit(reply, app.rateLimits.api, tokenBucket(auth.tokenHash));
    // GET /events as Server-Sent Events (PRODUCT §13): the stream answers by itself.
    if (
      method === 'GET' &&
      route.collection === 'events' &&
      route.item === undefined &&
      !route.action &&
      wantsStream(request)
    ) {
      await streams.open(request, reply, auth);
      return reply;
    }
    return sendAnswer(reply, await serve(request, route, method, auth));
  };

  /** The request's answer once its caller is known: permissions, the collection's rules, the read or write. */
  const serve = async (
    request: FastifyRequest,
    route: ApiRoute,
    method: string,
    auth: AuthContext,
  ): Promise<Answer> => {
    const ctx: Caller = {
      accountId: auth.accountId,
      userId: auth.userId,
      role: auth.role,
      permissions: auth.permissions,
      clientId: auth.clientId,
      now: auth.now,
      publicUrl: app.config.publicUrl,
      privateUrls: app.config.webhooksAllowPrivateUrls,
      clock: app.clock,
    };
    const c = app.services.registry.get(route.collection);
    if (!c) throw new ApiError('unknownCollection', `'${route.collection.slice(0, 64)}'`);
    const summary = isSummary(c, route);
    // An unknown action is missing whatever the method (GET /users/abc is not a 405).
    if (route.action && !summary && !c.actions?.[route.action]) {
      throw new ApiError(
        'unknownAction',
        `'${route.action.slice(0, 64)}' on /${c.name}${c.actions ? ` (actions: ${Object.keys(c.actions).join(', ')})` : ''}; an item is named by its numeric id, as in /${c.name}/123`,
      );
    }
    const getAction = summary || (route.action !== undefined && (c.getActions?.includes(route.action) ?? false));
    const allowed = allowedMethods(route, c.readOnly, c.appendOnly, getAction);
    if (!(allowed as string[]).includes(method)) {
      throw new ApiError(
        'methodNotAllowed',
        `${method} ${request.url.split('?')[0].slice(0, 100)}; allowed: ${allowed.join(', ')}`,
        { allow: allowed.join(', ') },
      );
    }
    const need = method === 'GET' || (route.action && c.readActions?.includes(route.action)) ? 'read' : 'write';
    gate(c, ctx, need, undefined, summary ? undefined : route.action, route.item);
    // Such an id cannot exist, and must not reach SQL (ids are int4 in PostgreSQL).
    if (route.item !== undefined && !isItemId(route.item)) throw new ApiError('itemNotFound');

    if (summary) return summaryAnswer(app.database.db, c, ctx, request.query as Record<string, unknown>);
    // A GET action (a job's slots) reads its own query and answers by itself.
    if (getAction) return c.actions![route.action!](actionRequest(request, ctx, route.item, app.services));
    if (method === 'GET') {
      const q = parseListQuery(c, request.query as Record<string, unknown>);
      if (route.item !== undefined)
        return readItem(app.services, c, ctx, route.item, q, header(request, 'if-none-match'));
      const raw = await rememberedList(app.database.db, c, ctx, q, app.config.rememberAnswers, async () => {
        const { items, count, version } = await list(app.database.db, c, ctx, q, { version: true });
        const metadata = {
          page: q.page,
          pagesCount: Math.ceil(count / q.recordsPerPage),
          recordsPerPage: q.recordsPerPage,
          recordsCount: count,
        };
        return { raw: listAnswer(c, q.projection.fields, { result: 'success', [c.name]: items, metadata }), version };
      });
      return { status: 200, body: undefined, raw };
    }

    const retry = openRetry(app.database, request, ctx, method, route.action === undefined);
    const work = async () => {
      if (route.action) {
        checkUntaggedIfMatch(header(request, 'if-match'), request.url.split('?')[0].slice(0, 100));
        const action = c.actions![route.action];
        return action({ ...actionRequest(request, ctx, route.item, app.services), retry });
      }
      const op = method === 'POST' ? 'create' : method === 'PATCH' ? 'update' : 'delete';
      if (op === 'create' && c.createVia) {
        throw new ApiError(
          'methodNotAllowed',
          `${c.name} are created with POST /${c.name}/${c.createVia}; allowed here: GET, PATCH, DELETE`,
          { allow: 'GET, PATCH, DELETE' },
        );
      }
      const input = bodyItems(c, route, method, request.body);
      return writeItems({
        services: app.services,
        collection: c,
        caller: ctx,
        op,
        input,
        urlId: route.item,
        ifMatch: header(request, 'if-match'),
        retry,
      });
    };
    return retry ? retry.run(work) : work();
  };

  purgeInBackground(app);
  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'], url: '/*', handler });
}
