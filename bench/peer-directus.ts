import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { Workload } from './load.js';
import { jobItem, rng, userItem } from './seed.js';
import { startProcess, type RunningServer } from './server.js';

/**
 * `npm run bench -- --peer directus`: Directus, a widely used Node.js data API, measured beside us
 * in the same run on the same machine, database kind and data shape. It is installed once into
 * `.bench/peers/directus/` (git-ignored) from the npm registry, bootstrapped on a fresh database,
 * given a `jobs` collection through its API, and seeded with SQL (the rows of our main data set:
 * 20,000 users and 200,000 jobs, from the same generators). W1 is a page of 50 users, W3 one job.
 */
/** The last Directus 11 whose engines accept Node 20 (11.4 and later need Node 22; we support 20.11+). */
export const DIRECTUS_VERSION = '11.3.5';
const USERS = 20_000;
const JOBS = 200_000;
const ADMIN = { email: 'admin@example.com', password: 'bench-admin-password' };

const peerDir = (root: string) => path.join(root, '.bench', 'peers', 'directus');

/** Installs Directus once (about 5 minutes: it compiles sqlite3 and isolated-vm); returns its CLI. */
export function installDirectus(root: string, log: (m: string) => void): string {
  const dir = peerDir(root);
  const cli = path.join(dir, 'node_modules', 'directus', 'cli.js');
  const installed = path.join(dir, 'node_modules', 'directus', 'package.json');
  if (fs.existsSync(cli) && JSON.parse(fs.readFileSync(installed, 'utf8')).version === DIRECTUS_VERSION) return cli;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-peer-directus', private: true }));
  log(`installing directus@${DIRECTUS_VERSION} into .bench/peers/directus (once)`);
  const r = spawnSync(
    'npm',
    ['install', `directus@${DIRECTUS_VERSION}`, '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: dir, stdio: 'inherit', timeout: 30 * 60_000 },
  );
  if (r.status !== 0 || !fs.existsSync(cli))
    throw new Error(`installing directus failed (npm exit ${r.status ?? r.signal})`);
  return cli;
}

interface PeerDb {
  env: Record<string, string>;
  insert(table: string, rows: Record<string, unknown>[]): Promise<void>;
  /** Planner statistics after seeding, as ours gets (vacuum analyze / analyze). */
  analyze(): Promise<void>;
  close(): Promise<void>;
}

/** A fresh database for Directus: a file under .bench/peers/directus/run, or `fsmbench_directus` beside ours. */
async function peerDatabase(root: string, databaseUrl: string | undefined): Promise<PeerDb> {
  if (databaseUrl) {
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query('drop database if exists fsmbench_directus with (force)');
    await admin.query('create database fsmbench_directus');
    await admin.end();
    const u = new URL(databaseUrl);
    u.pathname = '/fsmbench_directus';
    let client: pg.Client | undefined;
    return {
      env: { DB_CLIENT: 'pg', DB_CONNECTION_STRING: u.toString() },
      async insert(table, rows) {
        if (!client) {
          client = new pg.Client({ connectionString: u.toString() });
          await client.connect();
        }
        const cols = Object.keys(rows[0]);
        const types = await client.query(
          `select column_name, data_type from information_schema.columns where table_name = $1`,
          [table],
        );
        const typeOf = new Map(
          types.rows.map((r: { column_name: string; data_type: string }) => [r.column_name, r.data_type]),
        );
        // One statement per 5,000 rows: each column as an array, unnested.
        for (let i = 0; i < rows.length; i += 5000) {
          const chunk = rows.slice(i, i + 5000);
          await client.query(
            `insert into ${table} (${cols.join(', ')}) select * from unnest(${cols.map((c, k) => `$${k + 1}::${typeOf.get(c) === 'uuid' ? 'uuid' : typeOf.get(c) === 'integer' ? 'integer' : 'text'}[]`).join(', ')})`,
            cols.map((c) => chunk.map((r) => r[c] ?? null)),
          );
        }
      },
      async analyze() {
        await client?.query('vacuum analyze');
      },
      async close() {
        await client?.end();
        await new Promise((r) => setTimeout(r, 100));
        const c = new pg.Client({ connectionString: databaseUrl });
        await c.connect();
        await c.query('drop database if exists fsmbench_directus with (force)');
        await c.end();
      },
    };
  }
  const runDir = path.join(peerDir(root), 'run');
  fs.rmSync(runDir, { recursive: true, force: true });
  fs.mkdirSync(runDir, { recursive: true });
  const file = path.join(runDir, 'directus.sqlite');
  return {
    env: { DB_CLIENT: 'sqlite3', DB_FILENAME: file },
    async insert(table, rows) {
      const db = new Sqlite(file);
      db.pragma('busy_timeout = 10000');
      const cols = Object.keys(rows[0]);
      const stmt = db.prepare(
        `insert into ${table} (${cols.join(', ')}) values (${cols.map((c) => `@${c}`).join(', ')})`,
      );
      db.transaction(() => rows.forEach((r) => stmt.run(r)))();
      db.close();
    },
    async analyze() {
      const db = new Sqlite(file);
      db.exec('analyze');
      db.close();
    },
    async close() {
      fs.rmSync(runDir, { recursive: true, force: true });
    },
  };
}

export interface Peer {
  server: RunningServer;
  w1: Workload;
  w3: Workload;
  /** Bytes of one W1 and one W3 answer, to compare with ours (Directus answers every user field). */
  bytes: { w1: number; w3: number };
  close(): Promise<void>;
}

async function api(base: string, token: string | undefined, method: string, url: string, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`directus ${method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** The `jobs` collection: the columns our jobs rows have that W3 returns, as Directus fields. */
const JOB_FIELDS = [
  'title',
  'description',
  'priority',
  'order_number',
  'due_date',
  'address_line1',
  'address_city',
  'address_postcode',
  'address_country',
];

/** Bootstraps, starts and seeds Directus on a fresh database; the caller measures and closes it. */
export async function startDirectus(
  root: string,
  databaseUrl: string | undefined,
  port: number,
  log: (m: string) => void,
): Promise<Peer> {
  const cli = installDirectus(root, log);
  const db = await peerDatabase(root, databaseUrl);
  const work = path.join(peerDir(root), 'work');
  fs.mkdirSync(path.join(work, 'uploads'), { recursive: true });
  fs.mkdirSync(path.join(work, 'extensions'), { recursive: true });
  fs.writeFileSync(
    path.join(work, 'package.json'),
    JSON.stringify({ name: 'bench-peer-directus-work', private: true }),
  );
  const env: Record<string, string> = {
    ...db.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    KEY: crypto.randomUUID(),
    SECRET: crypto.randomBytes(32).toString('hex'),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    LOG_STYLE: 'raw',
    TELEMETRY: 'false',
    CACHE_ENABLED: 'false',
    RATE_LIMITER_ENABLED: 'false',
    STORAGE_LOCATIONS: 'local',
    STORAGE_LOCAL_ROOT: path.join(work, 'uploads'),
    EXTENSIONS_PATH: path.join(work, 'extensions'),
  };
  log('directus: bootstrap');
  const boot = spawnSync(process.execPath, [cli, 'bootstrap'], {
    cwd: work,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (boot.status !== 0)
    throw new Error(`directus bootstrap failed: ${boot.stdout.slice(-1500)}${boot.stderr.slice(-1500)}`);
  // Polled: at LOG_LEVEL=warn it prints no line when it is ready (info would log every request).
  const server = await startProcess(work, cli, env, {
    scriptArgs: ['start'],
    readyUrl: `http://127.0.0.1:${port}/server/ping`,
  });
  try {
    const base = server.url;
    const login = await api(base, undefined, 'POST', '/auth/login', ADMIN);
    const session = login.data.access_token as string;
    await api(base, session, 'POST', '/collections', {
      collection: 'jobs',
      meta: {},
      schema: {},
      fields: [
        {
          field: 'id',
          type: 'integer',
          meta: { hidden: true, readonly: true },
          schema: { is_primary_key: true, has_auto_increment: true },
        },
        ...JOB_FIELDS.map((field) => ({
          field,
          type: field === 'description' ? 'text' : 'string',
          meta: {},
          schema: {},
        })),
        { field: 'client_id', type: 'integer', meta: {}, schema: {} },
      ],
    });
    const token = crypto.randomBytes(24).toString('hex');
    await api(base, session, 'PATCH', '/users/me', { token });

    log(`directus: seeding ${USERS} users and ${JOBS} jobs`);
    const r = rng(7);
    const users = Array.from({ length: USERS }, (_, i) => {
      const u = userItem(r, 1);
      return {
        id: crypto.randomUUID(),
        first_name: u.firstName,
        last_name: u.lastName,
        email: `${i}.${u.email}`,
        status: 'active',
        provider: 'default',
      };
    });
    await db.insert('directus_users', users);
    const clientIds = Array.from({ length: 1000 }, (_, i) => i + 1);
    const jobs = Array.from({ length: JOBS }, () => {
      const j = jobItem(r, clientIds);
      return {
        title: j.title,
        description: j.description,
        priority: j.priority,
        order_number: null,
        due_date: j.dueDate,
        address_line1: j.address.line1,
        address_city: j.address.city,
        address_postcode: j.address.postcode,
        address_country: j.address.country,
        client_id: j.client?.id ?? null,
      };
    });
    for (let i = 0; i < jobs.length; i += 50_000) await db.insert('jobs', jobs.slice(i, i + 50_000));
    await db.analyze();

    const headers = { authorization: `Bearer ${token}` };
    const pickJob = rng(42);
    // The first half of the ids, as ours draws from the first account's jobs.
    const w1: Workload = { headers, path: '/users?limit=50' };
    const w3: Workload = { headers, path: () => `/items/jobs/${1 + Math.floor(pickJob() * (JOBS / 2))}` };
    const bytes = { w1: 0, w3: 0 };
    for (const [key, p] of [
      ['w1', w1.path as string],
      ['w3', '/items/jobs/1'],
    ] as const) {
      const res = await fetch(`${base}${p}`, { headers });
      if (res.status !== 200)
        throw new Error(`directus ${p} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      bytes[key] = (await res.arrayBuffer()).byteLength;
    }
    return {
      server,
      w1,
      w3,
      bytes,
      async close() {
        await server.stop();
        await db.close();
        fs.rmSync(work, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await server.stop();
    await db.close();
    throw err;
  }
}
