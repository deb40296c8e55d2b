import crypto from 'node:crypto';
import {
  LogController,
  type FastifyBaseLogger,
  type FastifyServerOptions,
  type RawRequestDefaultExpression,
} from 'fastify';

/**
 * Never log a query string (it may carry codes, `where` values or refused credentials), nor the
 * token of a share link (`/share/<collection>/<token>`: the whole secret of the link).
 */
export const redactUrl = (url: string) => url.split('?')[0].replace(/^(\/share\/[^/]*\/)[^/]+/, '$1[token]');

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
  childLoggerFactory: (logger: FastifyBaseLogger, bindings: object, opts: object) => lazyChild(logger, bindings, opts),
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

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

/**
 * A request's logger, made only when it first writes a line at an enabled level: pino's `child`
 * on every request cost a few per cent of a read's CPU (the profile of GET /users/ID), while at the
 * usual `warn` level almost no request logs anything.
 */
function lazyChild(parent: FastifyBaseLogger, bindings: object, opts: object): FastifyBaseLogger {
  let child: FastifyBaseLogger | undefined;
  const real = () => (child ??= parent.child(bindings, opts));
  const logger: Record<string, unknown> = {
    child: (b: object, o?: object) => real().child(b, o),
    silent: () => {},
    get level() {
      return child?.level ?? parent.level;
    },
    set level(level: string) {
      real().level = level;
    },
  };
  const enabled = (level: string) =>
    (parent as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true;
  for (const name of LEVELS) {
    logger[name] = (...args: unknown[]) => {
      if (!child && !enabled(name)) return;
      (real()[name] as (...a: unknown[]) => void)(...args);
    };
  }
  return logger as unknown as FastifyBaseLogger;
}
