import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import { authenticate } from '../auth/bearer.js';
import { permissionFor, type ActionRequest, type Caller, type Collection, type MultipartPart } from '../collections/machinery/collection.js';
import { parseListQuery } from '../collections/machinery/modifiers.js';
import { list, readByIds } from '../collections/machinery/read.js';
import { isPlainObject } from '../collections/machinery/validate.js';
import { API_VERSION, sendJson } from './envelope.js';
import { ApiError } from './errors.js';
import { enforceRateLimit, tokenBucket } from './rate-limit.js';
import { MAX_JSON_DEPTH, jsonHasNul, jsonTooDeep } from './json-depth.js';
import { allowedMethods, effectiveMethod, parsePath, type ApiRoute } from './route.js';

export const JSON_BODY_LIMIT = 1024 * 1024;

function checkVersion(v: string | string[] | undefined): void {
  if (v === undefined || v === '') throw new ApiError('versionMissing');
  if (v !== API_VERSION) throw new ApiError('versionUnsupported');
}

/** The items of a write body `{<collection>: [...]}`; another collection's name is error 1247. */
function bodyItems(c: Collection, route: ApiRoute, method: string, body: unknown): unknown[] {
  if (body instanceof Readable) throw new ApiError('unsupportedMediaType');
  if (body === undefined && method === 'DELETE' && route.item !== undefined) return [{ id: route.item }];
  if (!isPlainObject(body)) throw new ApiError('badCollectionBody');
  const other = Object.keys(body).find((k) => k !== c.name);
  if (other !== undefined) throw new ApiError('wrongCollection', `'${other.slice(0, 64)}' sent to /${c.name}`);
  const items = body[c.name];
  if (!Array.isArray(items)) throw new ApiError('badCollectionBody');
  if (route.item === undefined) return items;
  // Item endpoints take a collection too; its items name that item, or no id at all.
  return items.map((it) => (isPlainObject(it) && it.id === undefined ? { ...it, id: route.item } : it));
}

/** What an action sees of the request: no framework objects. */
function actionRequest(request: FastifyRequest, caller: Caller, item: number | undefined, services: ActionRequest['services']): ActionRequest {
  return {
    caller,
    item,
    headers: request.headers,
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
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT }, (_req, body, done) => {
    if (body === '') return done(null, undefined);
    if (jsonTooDeep(body as string)) return done(new ApiError('malformedJson', `nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    try {
      const parsed = JSON.parse(body as string);
      if (jsonHasNul(body as string, parsed)) return done(new ApiError('malformedJson', 'text must not contain U+0000'), undefined);
      done(null, parsed);
    } catch {
      done(new ApiError('malformedJson'), undefined);
    }
  });
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  // multipart/form-data is left unread too: actions pull its parts as streams (request.parts()),
  // setting their own size limits per request.
  await app.register(multipart);

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const route = parsePath(request.url);
    if (!route) throw new ApiError('notFound');
    checkVersion(request.headers['x-version']);
    const method = effectiveMethod(request.method, request.headers['x-method']);
    const auth = await authenticate(app.database, request.headers.authorization, app.clock());
    await enforceRateLimit(reply, app.rateLimits.api, tokenBucket(auth.tokenHash));
    const ctx: Caller = { accountId: auth.accountId, userId: auth.userId, role: auth.role, permissions: auth.permissions, clientId: auth.clientId, now: auth.now, publicUrl: app.config.publicUrl, privateUrls: app.config.webhooksAllowPrivateUrls };
    const c = app.services.registry.get(route.collection);
    if (!c) throw new ApiError('unknownCollection', `'${route.collection.slice(0, 64)}'`);
    const allowed = allowedMethods(route, c.readOnly);
    if (!(allowed as string[]).includes(method)) {
      throw new ApiError('methodNotAllowed', `${method} ${request.url.split('?')[0].slice(0, 100)}`, { allow: allowed.join(', ') });
    }
    const need = method === 'GET' ? 'read' : 'write';
    if (!ctx.permissions.has(permissionFor(c, need))) throw new ApiError('permissionMissing', permissionFor(c, need));
    if (c.policy[need][ctx.role] === 'none') throw new ApiError('roleForbids');

    if (route.action) {
      const action = c.actions?.[route.action];
      if (!action) throw new ApiError('unknownAction', `'${route.action.slice(0, 64)}'`);
      const answer = await action(actionRequest(request, ctx, route.item, app.services));
      if (answer.headers) reply.headers(answer.headers);
      return sendJson(reply, answer.status, answer.body);
    }

    if (method === 'GET') {
      const q = parseListQuery(c, request.query as Record<string, unknown>);
      if (route.item !== undefined) {
        const items = await readByIds(app.database.db, c, ctx, [route.item], q.projection);
        if (!items.length) throw new ApiError('itemNotFound');
        const metadata = { page: 1, pagesCount: 1, recordsPerPage: q.recordsPerPage, recordsCount: 1 };
        return sendJson(reply, 200, { result: 'success', [c.name]: items, metadata });
      }
      const { items, count } = await list(app.database.db, c, ctx, q);
      const metadata = { page: q.page, pagesCount: Math.ceil(count / q.recordsPerPage), recordsPerPage: q.recordsPerPage, recordsCount: count };
      return sendJson(reply, 200, { result: 'success', [c.name]: items, metadata });
    }

    const op = method === 'POST' ? 'create' : method === 'PATCH' ? 'update' : 'delete';
    if (op === 'create' && c.createVia) {
      throw new ApiError('methodNotAllowed', `${c.name} are created with POST /${c.name}/${c.createVia}`, { allow: 'GET, PATCH, DELETE' });
    }
    const out = await app.services.writer.write({ collection: c, caller: ctx, op, input: bodyItems(c, route, method, request.body), urlId: route.item });
    if (out.result === 'failure') return sendJson(reply, 422, out);
    return sendJson(reply, 200, { result: 'success', [c.name]: out.items, metadata: out.metadata });
  };

  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'], url: '/*', handler });
}
