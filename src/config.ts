import net from 'node:net';
import path from 'node:path';

/** Everything the process reads from its environment, validated once at start. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  publicUrl: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  workers: number;
  filesMaxBytes: number;
  logLevel: string;
  redisUrl?: string;
  /**
   * The proxies in front (TRUST_PROXY: addresses, CIDR ranges, or `loopback`, `linklocal`,
   * `uniquelocal`), whose X-Forwarded-For is believed for the client's address; none by default.
   */
  trustProxy?: string[];
  /** Requests per minute per access token on the API; 0 turns the limit off. */
  rateLimitApi: number;
  /** Requests per minute on /oauth2/*: per address on the pages, per client id on the client endpoints; 0 is off. */
  rateLimitAuth: number;
  /** Bearer secret for GET /metrics; the endpoint is off (404) without it. */
  metricsToken?: string;
  /** Events older than this many days are purged (`fsm events purge`). */
  /** Delays before each retry of a failed webhook delivery, in ms (WEBHOOK_RETRY_SCHEDULE). */
  webhookRetrySchedule: number[];
  /** Webhooks may target loopback and private addresses over plain http (development, tests). */
  webhooksAllowPrivateUrls: boolean;
  /** Events and finished deliveries older than this are purged. */
  eventsRetentionDays: number;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}`);
  }
  return n;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `5s,5m,30m,2h`: each delay a number and a unit (ms, s, m, h, d). */
export function parseSchedule(raw: string, name = 'WEBHOOK_RETRY_SCHEDULE'): number[] {
  const out = raw.split(',').map((part) => {
    const m = /^\s*(\d{1,9})(ms|s|m|h|d)\s*$/.exec(part);
    if (!m) throw new ConfigError(`${name}: '${part.trim().slice(0, 20)}' is not a delay such as 5s, 30m or 2h`);
    return Number(m[1]) * UNITS[m[2]];
  });
  if (out.length > 50) throw new ConfigError(`${name}: at most 50 retries`);
  return out;
}

/** Only named proxies: `true` (believe anyone's X-Forwarded-For) would let any client pick its address. */
function trustProxy(env: NodeJS.ProcessEnv): string[] | undefined {
  const entries = (env.TRUST_PROXY ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const e of entries) {
    const [addr, bits, extra] = e.split('/');
    const family = net.isIP(addr);
    const ok =
      ['loopback', 'linklocal', 'uniquelocal'].includes(e) ||
      (family !== 0 &&
        extra === undefined &&
        (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))));
    if (!ok)
      throw new ConfigError(
        'TRUST_PROXY must list proxy addresses or CIDR ranges (or loopback, linklocal, uniquelocal), comma-separated',
      );
  }
  return entries.length ? entries : undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.HOST || '127.0.0.1';
  const port = int(env, 'PORT', 8080, 0, 65535);
  const tls = Boolean(env.TLS_CERT_FILE && env.TLS_KEY_FILE);
  if (Boolean(env.TLS_CERT_FILE) !== Boolean(env.TLS_KEY_FILE)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be given together');
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  }
  const publicUrl = (
    env.PUBLIC_URL || `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError('PUBLIC_URL must be an absolute URL');
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN must be 16 to 256 printable characters without spaces');
  }
  return {
    host,
    port,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl,
    publicUrl,
    tlsCertFile: env.TLS_CERT_FILE || undefined,
    tlsKeyFile: env.TLS_KEY_FILE || undefined,
    workers: int(env, 'WORKERS', 1, 1, 64),
    filesMaxBytes: int(env, 'FILES_MAX_BYTES', 25 * 1024 * 1024, 1, 2 ** 40),
    logLevel: env.LOG_LEVEL || 'info',
    redisUrl: env.REDIS_URL || undefined,
    trustProxy: trustProxy(env),
    rateLimitApi: int(env, 'RATE_LIMIT_API', 600, 0, 1_000_000_000),
    rateLimitAuth: int(env, 'RATE_LIMIT_AUTH', 60, 0, 1_000_000_000),
    metricsToken,
    webhookRetrySchedule: parseSchedule(env.WEBHOOK_RETRY_SCHEDULE || '5s,5m,30m,2h,5h,10h,24h'),
    webhooksAllowPrivateUrls: env.WEBHOOKS_ALLOW_PRIVATE_URLS === '1',
    eventsRetentionDays: int(env, 'EVENTS_RETENTION_DAYS', 30, 1, 36_500),
  };
}

/** The SQLite file under DATA_DIR; the server and the admin CLI share it. */
export function sqliteFile(config: Config): string {
  return path.join(config.dataDir, 'fsm.sqlite');
}
