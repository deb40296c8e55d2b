import crypto from 'node:crypto';
import { LogController, type FastifyServerOptions, type RawRequestDefaultExpression } from 'fastify';

/** Never log a query string: it may carry codes, `where` values or (refused) credentials. */
export const redactUrl = (url: string) => url.split('?')[0];

/** A client's own X-Request-Id is kept when it is short and plain; anything else is replaced. */
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id: the caller's X-Request-Id when sane (a proxy's or a client's), else a new UUID. */
export function requestId(req: RawRequestDefaultExpression): string {
  const h = req.headers['x-request-id'];
  return typeof h === 'string' && SANE_ID.test(h) ? h : crypto.randomUUID();
}

/**
 * What Fastify needs to tag every log line of a request with its id (`requestId`), on top of the
 * logger itself. The id is echoed in X-Request-Id by the app's onRequest hook.
 */
export const requestIdOptions = {
  genReqId: requestId,
  // Our genReqId reads the header itself, after checking it (Fastify's own reading takes any value).
  requestIdHeader: false,
  logController: new LogController({ requestIdLogLabel: 'requestId' }),
} satisfies Partial<FastifyServerOptions>;

/**
 * The server's logger: JSON lines at `level`. Requests are logged without their query string or
 * headers (so no bearer token, cookie, password or `where` value), answers with their status.
 */
export function loggerOptions(level: string, stream?: NodeJS.WritableStream) {
  return {
    level,
    ...(stream ? { stream } : {}),
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.ip,
      }),
    },
  };
}
