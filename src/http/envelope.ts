import type { FastifyReply } from 'fastify';
import { ApiError, ERRORS } from '../errors.js';
import { errorAnswer } from './serialize.js';

export const API_VERSION = '1.0';
export const JSON_TYPE = 'application/json;charset=UTF-8';

/** The headers of spec §1.7, set on every response before anything else can fail. */
export const STANDARD_HEADERS: Readonly<Record<string, string>> = {
  'content-type': JSON_TYPE,
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-version': API_VERSION,
};

/** A JSON answer already written as text (src/http/serialize.ts). */
export function sendText(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).header('content-type', JSON_TYPE).send(text);
}

export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return sendText(reply, status, JSON.stringify(body));
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return sendText(reply, err.status, errorAnswer(err.body));
}

// What a database (or Redis) that is down, restarting or refusing connections throws: SQLSTATE
// class 08 (connection), 57P01-57P03 (terminated, crashed, starting), 53300 (too many connections),
// a database closed to connections (55000 with that message), node-postgres' socket errors (no
// code), socket errors, SQLite's busy lock and the Redis client's offline errors.
const UNAVAILABLE_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_TIMEOUT',
]);
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|Cannot use a pool after calling end)|is not currently accepting connections/;
const UNAVAILABLE_NAMES = new Set([
  'ClientClosedError',
  'ClientOfflineError',
  'SocketClosedUnexpectedlyError',
  'ConnectionTimeoutError',
]);

export function isStorageUnavailable(e: { code?: string; message?: string; name?: string } | undefined): boolean {
  if (!e) return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  if (UNAVAILABLE_NAMES.has(e.name ?? '')) return true;
  return (
    (e.code === undefined || e.code === '55000') && typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)
  );
}

/** Maps anything thrown to the envelope: our errors as they are, Fastify's by code, the rest as 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string; name?: string };
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('bodyTooLarge', 'at most 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('unsupportedMediaType');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('malformedJson');
  }
  if (isStorageUnavailable(e)) return new ApiError('unavailable', undefined, { 'retry-after': '1' });
  if (err instanceof SyntaxError) return new ApiError('malformedJson');
  if (e?.statusCode === 413) return new ApiError('bodyTooLarge');
  if (e?.statusCode === 415) return new ApiError('unsupportedMediaType');
  if (e?.statusCode === 400) return new ApiError('generic', 'malformed request');
  return new ApiError('server');
}

/**
 * The 503 (with Retry-After) of a storage outage, or undefined for any other failure: the one
 * classification the API, the token endpoints and the authorization pages answer by.
 */
export function asUnavailable(err: unknown): ApiError | undefined {
  const e = toApiError(err);
  return e.status === 503 ? e : undefined;
}

export { ERRORS };
