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
  /** LOCATIONS_RETENTION_DAYS: location pings older than this (by recordedAt) are purged in the background. */
  locationsRetentionDays: number;
  /**
   * Answers of unfiltered lists are remembered under their table's version (src/db/memo.ts);
   * REMEMBER_ANSWERS=0 turns that off, for measuring the read path itself (the bench's W1p).
   */
  rememberAnswers: boolean;
  /** Where uploaded bytes live: `local` (DATA_DIR/files) or `s3` (an S3-compatible store, `s3` below). */
  filesStore: 'local' | 's3';
  s3?: S3Config;
  /**
   * A request body still arriving: no byte for this long, or on average under 1 KiB/s once this
   * long has passed, and the connection is answered 408 and closed (src/http/input/body-timeout.ts).
   */
  bodyTimeoutMs: number;
  /** TRAVEL_SPEED_KMH: planning's great-circle travel speed (PRODUCT §15). */
  travelSpeedKmh: number;
  /** ROUTING_URL: an OSRM-compatible `table` service giving travel durations; unset, great-circle times. */
  routingUrl?: string;
  /** SMTP_URL: the relay messages are sent through (`smtp://` or `smtps://`, optional user and password); unset, they stay queued. */
  smtpUrl?: string;
  /** MAIL_FROM: the sender of messages (an address, or `Name <address>`). */
  mailFrom: string;
  /** MAIL_RETRY_SCHEDULE: delays before each retry of a message refused temporarily, in ms. */
  mailRetrySchedule: number[];
}

export interface S3Config {
  /** Unset: AWS's own endpoint for the region. */
  endpoint?: string;
  region: string;
  bucket: string;
  /** Unset (both): the SDK's default credential chain (AWS_* variables, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  forcePathStyle: boolean;
  /** How long one request to the store may go without an answer (connection, headers, idle socket). */
  timeoutMs: number;
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

/** One delay such as `30s` or `500ms` (the units of WEBHOOK_RETRY_SCHEDULE), at least `min` ms. */
function duration(env: NodeJS.ProcessEnv, name: string, fallback: string, min: number): number {
  const raw = env[name] || fallback;
  const [ms] = raw.includes(',') ? [NaN] : parseSchedule(raw, name);
  if (!(ms >= min)) throw new ConfigError(`${name} must be one delay of at least ${min} ms, such as ${fallback}`);
  return ms;
}

/** CopyObject, which publishes a staged upload under its digest, copies at most 5 GiB. */
const S3_MAX_OBJECT = 5 * 1024 ** 3;

function s3Config(env: NodeJS.ProcessEnv, filesMaxBytes: number): S3Config {
  const bucket = env.S3_BUCKET || '';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(
      'FILES_STORE=s3 needs S3_BUCKET, a bucket name (3 to 63 lowercase letters, digits, dots, hyphens)',
    );
  const endpoint = env.S3_ENDPOINT || undefined;
  if (endpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password)
      throw new ConfigError('S3_ENDPOINT must be an http:// or https:// URL without credentials');
  }
  const keyId = env.S3_ACCESS_KEY_ID || '';
  const secret = env.S3_SECRET_ACCESS_KEY || '';
  if (Boolean(keyId) !== Boolean(secret))
    throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be given together');
  if (filesMaxBytes > S3_MAX_OBJECT)
    throw new ConfigError(`with FILES_STORE=s3, FILES_MAX_BYTES must be at most ${S3_MAX_OBJECT} (5 GiB)`);
  if (!['', '0', '1'].includes(env.S3_FORCE_PATH_STYLE ?? ''))
    throw new ConfigError('S3_FORCE_PATH_STYLE must be 0 or 1');
  return {
    endpoint,
    region: env.S3_REGION || 'us-east-1',
    bucket,
    credentials: keyId ? { accessKeyId: keyId, secretAccessKey: secret } : undefined,
    forcePathStyle: env.S3_FORCE_PATH_STYLE === '1',
    timeoutMs: duration(env, 'S3_TIMEOUT', '10s', 100),
  };
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
  const filesStore = env.FILES_STORE || 'local';
  if (filesStore !== 'local' && filesStore !== 's3') throw new ConfigError('FILES_STORE must be local or s3');
  const filesMaxBytes = int(env, 'FILES_MAX_BYTES', 25 * 1024 * 1024, 1, 2 ** 40);
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
    filesMaxBytes,
    logLevel: env.LOG_LEVEL || 'info',
    redisUrl: env.REDIS_URL || undefined,
    trustProxy: trustProxy(env),
    rateLimitApi: int(env, 'RATE_LIMIT_API', 600, 0, 1_000_000_000),
    rateLimitAuth: int(env, 'RATE_LIMIT_AUTH', 60, 0, 1_000_000_000),
    metricsToken,
    webhookRetrySchedule: parseSchedule(env.WEBHOOK_RETRY_SCHEDULE || '5s,5m,30m,2h,5h,10h,24h'),
    webhooksAllowPrivateUrls: env.WEBHOOKS_ALLOW_PRIVATE_URLS === '1',
    eventsRetentionDays: int(env, 'EVENTS_RETENTION_DAYS', 30, 1, 36_500),
    locationsRetentionDays: int(env, 'LOCATIONS_RETENTION_DAYS', 30, 1, 36_500),
    rememberAnswers: env.REMEMBER_ANSWERS !== '0',
    filesStore,
    s3: filesStore === 's3' ? s3Config(env, filesMaxBytes) : undefined,
    bodyTimeoutMs: duration(env, 'BODY_TIMEOUT', '30s', 100),
    travelSpeedKmh: int(env, 'TRAVEL_SPEED_KMH', 40, 1, 1000),
    routingUrl: routingUrl(env),
    smtpUrl: smtpUrl(env),
    mailFrom: mailFrom(env, publicUrl),
    mailRetrySchedule: parseSchedule(env.MAIL_RETRY_SCHEDULE || '1m,5m,30m,2h,12h', 'MAIL_RETRY_SCHEDULE'),
  };
}

/** ROUTING_URL: an http(s) origin (and path prefix) of an OSRM-compatible server, without a trailing slash. */
function routingUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.ROUTING_URL;
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('ROUTING_URL must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('ROUTING_URL must be http(s)');
  return raw.replace(/\/+$/, '');
}

/** SMTP_URL: smtp:// or smtps://, a host, an optional port, user and password, nothing else. */
function smtpUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SMTP_URL;
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !/^smtps?:$/.test(url.protocol) || !url.hostname || (url.pathname !== '' && url.pathname !== '/'))
    throw new ConfigError('SMTP_URL must be smtp://[user:password@]host[:port] or smtps://…');
  return raw;
}

/** An address: no spaces, controls or angle brackets; `@` and a dotted domain (the `email` kind's rule). */
const MAIL_ADDRESS = /^[^\s@<>"(),;:\\\p{Cc}]+@[^\s@<>"(),;:\\\p{Cc}]+\.[^\s@<>"(),;:\\\p{Cc}]+$/u;

/** MAIL_FROM: `address` or `Display Name <address>` on one line; default `no-reply@` the public host. */
function mailFrom(env: NodeJS.ProcessEnv, publicUrl: string): string {
  const raw = env.MAIL_FROM;
  if (!raw) {
    const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
    return `no-reply@${host.includes('.') && !/^[\d.:]+$/.test(host) ? host : 'localhost.localdomain'}`;
  }
  const m = /^(?:([^<>\p{Cc}"]{1,100}) <([^<>]+)>|([^<>]+))$/u.exec(raw);
  const address = m?.[2] ?? m?.[3];
  if (!address || !MAIL_ADDRESS.test(address))
    throw new ConfigError('MAIL_FROM must be an e-mail address, or Name <address>, on one line');
  return raw;
}

/** The SQLite file under DATA_DIR; the server and the admin CLI share it. */
export function sqliteFile(config: Config): string {
  return path.join(config.dataDir, 'fsm.sqlite');
}
