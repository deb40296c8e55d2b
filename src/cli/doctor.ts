import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { ConfigError, loadConfig, sqliteFile, type Config } from '../config.js';
import { openDatabase } from '../db/index.js';
import { MIGRATION_NAMES } from '../db/migrate.js';
import { connectionProblem, databaseLabel, reason } from '../db/problems.js';
import { createStore } from '../storage/index.js';
import type { Command } from './command.js';

export interface Check {
  check: string;
  ok: boolean;
  message: string;
}

const TIMEOUT_MS = 3000;
const DAY_MS = 24 * 3600 * 1000;

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Opens the database without migrating it, and says how far its schema is. */
async function checkDatabase(config: Config): Promise<Check> {
  const where = databaseLabel({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFile(config) });
  if (!config.databaseUrl) {
    const file = sqliteFile(config);
    if (!fs.existsSync(file)) {
      const dir = fs.existsSync(config.dataDir) ? config.dataDir : path.dirname(config.dataDir);
      try {
        fs.accessSync(dir, fs.constants.W_OK);
      } catch {
        return {
          check: 'database',
          ok: false,
          message: `${where}: no database yet, and ${dir} is not writable, so the server cannot create it`,
        };
      }
      return {
        check: 'database',
        ok: true,
        message: `${where}: no database yet; the server creates it at its first start`,
      };
    }
  }
  const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFile(config), poolSize: 1 });
  try {
    await within(TIMEOUT_MS, 'the database', sql`select 1`.execute(database.db));
    const tables = await within(
      TIMEOUT_MS,
      'the database',
      database.db.introspection.getTables({ withInternalKyselyTables: true }),
    );
    if (!tables.some((t) => t.name === 'kysely_migration')) {
      return {
        check: 'database',
        ok: true,
        message: `${where} answers; it is empty: the server applies the migrations at its first start`,
      };
    }
    const applied = new Set(
      (await sql<{ name: string }>`select name from kysely_migration`.execute(database.db)).rows.map((r) => r.name),
    );
    const pending = MIGRATION_NAMES.filter((n) => !applied.has(n));
    const unknown = [...applied].filter((n) => !MIGRATION_NAMES.includes(n));
    const notes = [
      pending.length
        ? `${pending.length} migration(s) pending (${pending.join(', ')}), applied at the next start`
        : 'schema up to date',
      ...(unknown.length
        ? [
            `it has migrations this version does not know (${unknown.join(', ')}): is an older version running against a newer database?`,
          ]
        : []),
    ];
    return { check: 'database', ok: true, message: `${where} answers; ${notes.join('; ')}` };
  } catch (err) {
    return { check: 'database', ok: false, message: `${where}: ${connectionProblem(err)}` };
  } finally {
    await database.close().catch(() => {});
  }
}

async function checkRedis(url: string): Promise<Check> {
  const where = `Redis at ${new URL(url).host}`;
  const { createClient } = await import('redis');
  const client = createClient({ url, socket: { connectTimeout: TIMEOUT_MS, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await within(TIMEOUT_MS, where, client.connect());
    const pong = await within(TIMEOUT_MS, where, client.ping());
    return {
      check: 'redis',
      ok: pong === 'PONG',
      message: `${where} answers ${pong}; the rate-limit counters live there`,
    };
  } catch (err) {
    return {
      check: 'redis',
      ok: false,
      message: `${where}: ${connectionProblem(err)}; the server would refuse rate-limited requests with 503`,
    };
  } finally {
    try {
      if (client.isOpen) await client.quit();
    } catch {
      // closing a client that never connected: nothing to do
    }
  }
}

/** The certificate parses, is in date, and the key is its key. */
function checkTls(config: Config, now = Date.now()): Check {
  const read = (file: string, what: string) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new Error(`cannot read the ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? reason(err)}`, {
        cause: err,
      });
    }
  };
  try {
    const cert = new crypto.X509Certificate(read(config.tlsCertFile!, 'certificate (TLS_CERT_FILE)'));
    let key: crypto.KeyObject;
    try {
      key = crypto.createPrivateKey(read(config.tlsKeyFile!, 'key (TLS_KEY_FILE)'));
    } catch (err) {
      throw new Error(
        String(reason(err)).startsWith('cannot read')
          ? reason(err)
          : `TLS_KEY_FILE is not a PEM private key (${reason(err)})`,
        { cause: err },
      );
    }
    if (!cert.checkPrivateKey(key))
      return { check: 'tls', ok: false, message: 'TLS_KEY_FILE is not the key of the certificate in TLS_CERT_FILE' };
    const until = Date.parse(cert.validTo);
    if (until <= now)
      return { check: 'tls', ok: false, message: `the certificate expired on ${new Date(until).toISOString()}` };
    if (Date.parse(cert.validFrom) > now)
      return {
        check: 'tls',
        ok: false,
        message: `the certificate is not valid before ${new Date(Date.parse(cert.validFrom)).toISOString()}`,
      };
    const days = Math.floor((until - now) / DAY_MS);
    return {
      check: 'tls',
      ok: true,
      message: `certificate for ${cert.subject.replace(/\n/g, ', ')} valid until ${new Date(until).toISOString()} (${days} days)${days < 14 ? ': renew it soon' : ''}`,
    };
  } catch (err) {
    return {
      check: 'tls',
      ok: false,
      message: reason(err).includes('TLS_') ? reason(err) : `TLS_CERT_FILE is not a PEM certificate (${reason(err)})`,
    };
  }
}

/** The file store takes a write: DATA_DIR/files is writable, or the bucket exists and takes the credentials. */
async function checkFiles(config: Config): Promise<Check> {
  const store = createStore(config);
  const where =
    config.s3 !== undefined
      ? `S3 bucket ${config.s3.bucket}${config.s3.endpoint ? ` at ${config.s3.endpoint}` : ` in ${config.s3.region}`}`
      : `${path.join(config.dataDir, 'files')}`;
  try {
    await within(config.s3 ? config.s3.timeoutMs * 3 + 1000 : TIMEOUT_MS, 'the file store', store.check());
    return {
      check: 'files',
      ok: true,
      message: config.s3 ? `${where}: an object was written and removed` : `${where}: writable`,
    };
  } catch (err) {
    return { check: 'files', ok: false, message: `${reason(err)}; uploads and downloads would answer 503` };
  } finally {
    await store.close();
  }
}

function describeConfig(config: Config): string {
  const off = (n: number) => (n === 0 ? 'off' : `${n}/min`);
  return [
    `listening on ${config.host}:${config.port}`,
    `public URL ${config.publicUrl}`,
    `rate limits api ${off(config.rateLimitApi)}, auth ${off(config.rateLimitAuth)}`,
    `metrics ${config.metricsToken ? 'on (METRICS_TOKEN set)' : 'off (METRICS_TOKEN unset)'}`,
    `events kept ${config.eventsRetentionDays} days`,
    `files ${config.filesStore}`,
  ].join('; ');
}

export async function runChecks(env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return [{ check: 'configuration', ok: false, message: err.message }];
    throw err;
  }
  const checks: Check[] = [{ check: 'configuration', ok: true, message: describeConfig(config) }];
  checks.push(await checkDatabase(config));
  checks.push(await checkFiles(config));
  if (config.redisUrl) checks.push(await checkRedis(config.redisUrl));
  if (config.tlsCertFile) checks.push(checkTls(config));
  return checks;
}

export const doctor: Command = {
  name: 'doctor',
  summary:
    'Checks the configuration, the database, the file store (DATA_DIR/files or the S3 bucket), Redis (when REDIS_URL is set) and the TLS files (when set), and says what is wrong.',
  details:
    'Prints {"ok":true|false,"checks":[{"check":"database","ok":true,"message":"..."}]}; each problem is also written to stderr. Exits 1 when a check fails.',
  needsDatabase: false,
  async run() {
    const checks = await runChecks();
    for (const c of checks) if (!c.ok) process.stderr.write(`doctor: ${c.check}: ${c.message}\n`);
    return { ok: checks.every((c) => c.ok), checks };
  },
};
