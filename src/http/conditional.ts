import type { FastifyReply } from 'fastify';
import type { Caller, Collection, Op } from '../collections/machinery/collection.js';
import { currentEtag, etagOf, noneMatchHolds } from '../collections/machinery/etag.js';
import type { ListQuery } from '../collections/machinery/modifiers.js';
import { present } from '../collections/machinery/present.js';
import { projectedRows } from '../collections/machinery/read.js';
import type { Services } from '../collections/machinery/services.js';
import { sendJson, sendText } from './envelope.js';
import { ApiError } from '../errors.js';
import { listAnswer } from './serialize.js';
import type { Answer, Retry } from './idempotency/index.js';
import type { WriteSuccess } from '../collections/machinery/write/outcome.js';

/**
 * Sends an answer: the first one with what it reveals once (a new secret), a replay's body byte
 * for byte as it was kept.
 */
export function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  if (answer.headers) reply.headers(answer.headers);
  if (answer.status === 304) return reply.code(304).removeHeader('content-type').send();
  if (answer.revealed !== undefined) return sendJson(reply, answer.status, answer.revealed);
  return answer.raw === undefined
    ? sendJson(reply, answer.status, answer.body)
    : sendText(reply, answer.status, answer.raw);
}

/**
 * `GET /:collection/:item` with its ETag, and 304 when `If-None-Match` names it. The item's row
 * and its version are one statement, so the ETag is always the version of the item sent.
 */
export async function readItem(
  services: Services,
  c: Collection,
  caller: Caller,
  id: number,
  q: ListQuery,
  ifNoneMatch: string | undefined,
): Promise<Answer> {
  const db = services.database.db;
  const rows = await projectedRows(db, c, caller, [id], q.projection, { version: true });
  if (!rows.length) throw new ApiError('itemNotFound');
  const etag = etagOf(id, Number(rows[0].version));
  if (noneMatchHolds(ifNoneMatch, etag)) return { status: 304, body: undefined, headers: { etag } };
  const items = await present(db, c, caller, q.projection, rows);
  const metadata = { page: 1, pagesCount: 1, recordsPerPage: q.recordsPerPage, recordsCount: 1 };
  const body = { result: 'success' as const, [c.name]: items, metadata };
  return { status: 200, body, raw: listAnswer(c, q.projection.fields, body), headers: { etag } };
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
  let sealed: { result: WriteSuccess; answer: Answer } | undefined;
  const out = await w.services.writer.write({
    collection: c,
    caller,
    op: w.op,
    input: w.input,
    urlId,
    ifMatch: w.ifMatch,
    seal: async (tx, result) => {
      const etag =
        urlId !== undefined && w.op === 'update'
          ? await currentEtag(tx, c, caller, urlId, { access: 'all' })
          : undefined;
      headers = etag ? { etag } : {};
      // The kept answer is the sealed one: without the secrets a create shows once.
      sealed = {
        result,
        answer: {
          status: 200,
          body: { result: 'success', [c.name]: result.items, metadata: result.metadata },
          headers,
        },
      };
      await retry?.keep(tx, sealed.answer);
    },
  });
  if (out.result === 'failure') return { status: 422, body: out };
  const shown = { result: 'success', [c.name]: out.items, metadata: out.metadata };
  if (!sealed) return { status: 200, body: shown, headers };
  // The answer is the kept one (its text, made when it was kept, goes out); a create that shows a
  // secret once sends it beside (`revealed`), never kept.
  return out === sealed.result ? sealed.answer : { ...sealed.answer, revealed: shown };
}
