import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import type { Dialect } from '../../src/db/index.js';
import { createAccount } from '../../src/accounts/service.js';
import { ALL_PERMISSIONS } from '../../src/collections/index.js';
import { issueToken } from '../../src/auth/tokens.js';
import { PG_URL, createClient, createTestDb, type TestDb } from '../helpers.js';

/** The real server process (`npm start`), on a test database, for the crash, outage and soak tests. */
const SERVER = new URL('../../src/server.js', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  origin: string;
  output(): string;
  exited: Promise<number | null>;
}

export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return { child, origin, output: () => out, exited };
}

/** Resident memory of a process in MiB (Linux /proc). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

export interface Site {
  db: TestDb;
  /** The environment that starts a server on this database. */
  env: Record<string, string>;
  accountId: number;
  token: string;
  /** The PostgreSQL database's name (for outages of that one database). */
  pgName?: string;
  close(): Promise<void>;
}

/** An account on the site's database, with its Administrator's long-lived access token. */
export async function siteAccount(db: TestDb): Promise<{ accountId: number; token: string }> {
  const now = Date.now();
  const { account, user } = await createAccount(db.services.writer, {
    companyName: 'Crash Test Ltd',
    firstName: 'Ada',
    lastName: 'Admin',
    mobile: '+441234567890',
    login: `crash-${now}-${Math.random().toString(36).slice(2, 8)}`,
    password: 'correct horse battery',
  });
  const { clientId } = await createClient(db.database);
  const { token } = await issueToken(
    db.database.db,
    'access',
    { clientId, userId: user.id, accountId: account.id, permissions: [...ALL_PERMISSIONS] },
    now,
  );
  return { accountId: account.id, token };
}

/** A migrated database with one account and a long-lived access token; rate limits off. */
export async function createSite(dialect: Dialect, env: Record<string, string> = {}): Promise<Site> {
  const db = await createTestDb(dialect);
  const { accountId, token } = await siteAccount(db);
  const pgName = db.config.databaseUrl ? new URL(db.config.databaseUrl).pathname.slice(1) : undefined;
  return {
    db,
    env: {
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.config.databaseUrl ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_API: '0',
      RATE_LIMIT_AUTH: '0',
      WORKERS: '1',
      ...env,
    },
    accountId,
    token,
    pgName,
    close: () => db.close(),
  };
}

/** Runs SQL as the PostgreSQL superuser on the maintenance connection (TEST_DATABASE_URL). */
export async function pgAdmin(sqlText: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(sqlText);
  } finally {
    await c.end();
  }
}

export const headers = (token: string) => ({
  authorization: `Bearer ${token}`,
  'x-version': '1.0',
  'content-type': 'application/json',
});

/** fetch that reports a refused or reset connection as status 0 instead of throwing. */
export async function request(
  origin: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any; headers: Headers | undefined }> {
  try {
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: headers(token),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, body: json, headers: res.headers };
  } catch {
    return { status: 0, body: undefined, headers: undefined };
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
