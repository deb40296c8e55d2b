import type { FastifyReply } from 'fastify';
import { ApiError, ERRORS } from './errors.js';

export const API_VERSION = '1.0';
export const JSON_TYPE = 'application/json;charset=UTF-8';

/** The headers of spec §1.7, set on every response before anything else can fail. */
export function setStandardHeaders(reply: FastifyReply): void {
  reply.header('content-type', JSON_TYPE);
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
  reply.header('x-version', API_VERSION);
}

export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('content-type', JSON_TYPE).send(JSON.stringify(body));
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return sendJson(reply, err.status, { result: 'error', error: err.body });
}

/** Maps anything thrown to the envelope: our errors as they are, Fastify's by code, the rest as 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { code?: string; statusCode?: number };
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('bodyTooLarge', 'at most 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('unsupportedMediaType');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('malformedJson');
    case 'ECONNREFUSED':
    case 'ECONNRESET':
    case '57P01':
    case '57P03':
    case 'SQLITE_BUSY':
      return new ApiError('unavailable', undefined, { 'retry-after': '1' });
  }
  if (err instanceof SyntaxError) return new ApiError('malformedJson');
  if (e?.statusCode === 413) return new ApiError('bodyTooLarge');
  if (e?.statusCode === 415) return new ApiError('unsupportedMediaType');
  if (e?.statusCode === 400) return new ApiError('generic', 'malformed request');
  return new ApiError('server');
}

export { ERRORS };
