import type { FastifyReply } from 'fastify';
import type { Caller, Collection, Op } from '../collections/machinery/collection.js';
import { currentEtag, noneMatchHolds } from '../collections/machinery/etag.js';
import type { ListQuery } from '../collections/machinery/modifiers.js';
import { readByIds } from '../collections/machinery/read.js';
import type { Services } from '../collections/machinery/services.js';
import { JSON_TYPE, sendJson } from './envelope.js';
import { ApiError } from './errors.js';
import type { Answer, Retry } from './idempotency/index.js';

/** Sends an answer; a replay's body goes out byte for byte as it was first sent. */
export function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  if (answer.status === 304) return reply.code(304).removeHeader('content-type').send();
  if (answer.raw === undefined) return sendJson(reply, answer.status, answer.body);
  return reply.code(answer.status).header('content-type', JSON_TYPE).send(answer.raw);
}

/**
 * `GET /:collection/:item` with its ETag, and 304 when `If-None-Match` names it. The version is
 * read before the item: a write in between gives an older ETag with the newer item, which only
 * makes a later If-Match fail, never pass for changes the client has not seen.
 */
export async function readItem(services: Services, c: Collection, caller: Caller, id: number, q: ListQuery, ifNoneMatch: string | undefined): Promise<Answer> {
  const db = services.database.db;
  const etag = await currentEtag(db, c, caller, id);
  if (etag === undefined) throw new ApiError('itemNotFound');
  if (noneMatchHolds(ifNoneMatch, etag)) return { status: 304, body: undefined, headers: { etag } };
  const items = await readByIds(db, c, caller, [id], q.projection);
  if (!items.length) throw new ApiError('itemNotFound');
  const metadata = { page: 1, pagesCount: 1, recordsPerPage: q.recordsPerPage, recordsCount: 1 };
  return { status: 200, body: { result: 'success', [c.name]: items, metadata }, headers: { etag } };
}

export interface WriteCall {
  services: Services;
  collection: Collection;
  caller: Caller;
  op: Op;
  input: unknown[];
  urlId?: number;
  ifMatch?: string;
  retry?: Retry;
}

/**
 * A write through the pipeline, answered as the API answers. The answer is made in the write's
 * transaction (the seal hook): an update of one item carries the ETag of the version it wrote,
 * and an Idempotency-Key keeps the answer there, committed with the write.
 */
export async function writeItems(w: WriteCall): Promise<Answer> {
  const { collection: c, caller, urlId, retry } = w;
  let headers: Record<string, string> = {};
  const out = await w.services.writer.write({
    collection: c, caller, op: w.op, input: w.input, urlId, ifMatch: w.ifMatch,
    seal: async (tx, result) => {
      const etag = urlId !== undefined && w.op === 'update' ? await currentEtag(tx, c, caller, urlId, { access: 'all' }) : undefined;
      headers = etag ? { etag } : {};
      // The kept answer is the sealed one: without the secrets a create shows once.
      await retry?.keep(tx, { status: 200, body: { result: 'success', [c.name]: result.items, metadata: result.metadata }, headers });
    },
  });
  if (out.result === 'failure') return { status: 422, body: out };
  return { status: 200, body: { result: 'success', [c.name]: out.items, metadata: out.metadata }, headers };
}
