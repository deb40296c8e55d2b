import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { connect, openDatabase, type Database, type Dialect } from '../src/db/index.js';
import { issueToken } from '../src/auth/tokens.js';
import { untyped } from '../src/db/runner.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { createBenchClient, seedAccount, type AccountSize, type SeededAccount } from './seed.js';

/** A seeded database as cached on disk (SQLite file) or as a template database (PostgreSQL). */
export interface Dataset {
  name: string;
  dialect: Dialect;
  accounts: SeededAccount[];
  clientId: string;
  clientSecret: string;
  /** Some job ids of the first account, for W3 and W5. */
  jobIds: number[];
  /** Some user ids of the first account, for GET /users/ID. */
  userIds: number[];
}

/** A private copy of a dataset for one server run: writes never reach the cache. */
export interface WorkingCopy {
  env: Record<string, string | undefined>;
  open(): Database;
  drop(): Promise<void>;
}

export const SEED_VERSION = 2;

/**
 * The cache key: the schema (every compiled migration) and the seeding code and sizes. Any change
 * to a migration reseeds, so a cached database always has the schema the server expects.
 */
function cacheKey(root: string, dialect: Dialect, sizes: AccountSize[]): string {
  const h = crypto.createHash('sha256').update(JSON.stringify({ SEED_VERSION, dialect, sizes }));
  const migrations = path.join(root, 'dist/src/db/migrations');
  for (const f of fs
    .readdirSync(migrations)
    .filter((f) => f.endsWith('.js'))
    .sort())
    h.update(f).update(fs.readFileSync(path.join(migrations, f)));
  h.update(fs.readFileSync(path.join(root, 'dist/src/db/migrate.js')));
  h.update(fs.readFileSync(path.join(root, 'dist/bench/seed.js')));
  return h.digest('hex').slice(0, 12);
}

const pgUrl = (base: string, db: string) => {
  const u = new URL(base);
  u.pathname = `/${db}`;
  return u.toString();
};

async function pgAdmin<T>(base: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function seed(
  database: Database,
  name: string,
  dialect: Dialect,
  sizes: AccountSize[],
  log: (m: string) => void,
): Promise<Dataset> {
  const { clientId, clientSecret } = await createBenchClient(database);
  const accounts: SeededAccount[] = [];
  for (const [i, size] of sizes.entries()) accounts.push(await seedAccount(database, i + 1, size, clientId, log));
  const jobs = await database.db
    .selectFrom('jobs')
    .select('id')
    .where('account_id', '=', accounts[0].accountId)
    .orderBy('id')
    .execute();
  const everyFew = (ids: { id: number }[]) => {
    const step = Math.max(1, Math.floor(ids.length / 2000));
    return ids.filter((_, i) => i % step === 0).map((j) => j.id);
  };
  const users = await database.db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accounts[0].accountId)
    .orderBy('id')
    .execute();
  return { name, dialect, accounts, clientId, clientSecret, jobIds: everyFew(jobs), userIds: everyFew(users) };
}

/**
 * The dataset `name`, seeded once and cached in `.bench/` (SQLite) or as a PostgreSQL template
 * database named after the cache key; a fresh clone seeds it on its first run.
 */
export async function dataset(
  root: string,
  name: string,
  sizes: AccountSize[],
  databaseUrl: string | undefined,
  log: (m: string) => void,
): Promise<Dataset> {
  const dialect: Dialect = databaseUrl ? 'postgres' : 'sqlite';
  const key = cacheKey(root, dialect, sizes);
  const dir = path.join(root, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const meta = path.join(dir, `${dialect}-${name}-${key}.json`);
  if (fs.existsSync(meta)) return JSON.parse(fs.readFileSync(meta, 'utf8')) as Dataset;
  const started = Date.now();
  log(
    `seeding ${name} (${dialect}, key ${key}): ${sizes.map((s) => `${s.users} users, ${s.jobs} jobs, ${s.visits} visits`).join(' + ')}`,
  );
  let database: Database;
  if (databaseUrl) {
    const db = `fsmbench_${name}_${key}`;
    await pgAdmin(databaseUrl, async (c) => {
      await c.query(`drop database if exists ${db} with (force)`);
      await c.query(`create database ${db}`);
    });
    database = await connect({ databaseUrl: pgUrl(databaseUrl, db) });
  } else {
    const file = path.join(dir, `${dialect}-${name}-${key}.sqlite`);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    database = await connect({ sqliteFile: file });
  }
  let ds: Dataset;
  try {
    ds = await seed(database, name, dialect, sizes, log);
    if (databaseUrl) await sqlExec(database, 'vacuum analyze');
    else await sqlExec(database, 'analyze');
  } finally {
    await database.close();
  }
  fs.writeFileSync(meta, JSON.stringify(ds));
  log(`seeded ${name} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return ds;
}

async function sqlExec(database: Database, text: string) {
  const { sql } = await import('kysely');
  await sql.raw(text).execute(database.db);
}

/** Copies the cached dataset for one server run (a file copy, or CREATE DATABASE ... TEMPLATE). */
export async function workingCopy(
  root: string,
  ds: Dataset,
  sizes: AccountSize[],
  databaseUrl: string | undefined,
): Promise<WorkingCopy> {
  const key = cacheKey(root, ds.dialect, sizes);
  if (databaseUrl) {
    // Named after the checkout too: benches of two checkouts on one server must not drop each other's copy.
    const db = `fsmbench_${ds.name}_run_${crypto.createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
    await pgAdmin(databaseUrl, async (c) => {
      await c.query(`drop database if exists ${db} with (force)`);
      await c.query(`create database ${db} template fsmbench_${ds.name}_${key}`);
      // The copy is written out now, not while the first workload runs (checkpoint needs a superuser).
      await c.query('checkpoint').catch(() => {});
    });
    const url = pgUrl(databaseUrl, db);
    return {
      env: { DATABASE_URL: url },
      open: () => openDatabase({ databaseUrl: url, poolSize: 2 }),
      drop: () => pgAdmin(databaseUrl, async (c) => void (await c.query(`drop database if exists ${db} with (force)`))),
    };
  }
  const dataDir = path.join(root, '.bench', 'run', ds.name);
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'fsm.sqlite');
  fs.copyFileSync(path.join(root, '.bench', `sqlite-${ds.name}-${key}.sqlite`), file);
  // Written out now, not while the first workload runs (its writeback slowed W1 in one run).
  const fd = fs.openSync(file, 'r+');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: '' },
    open: () => openDatabase({ sqliteFile: file }),
    drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** Fresh tokens for a run (cached datasets outlive the 3600 s of an access token), of the first account's Administrator or another's. */
export async function issueTokens(copy: WorkingCopy, ds: Dataset, account = 0) {
  const database = copy.open();
  try {
    const a = ds.accounts[account];
    const grant = {
      clientId: ds.clientId,
      userId: a.adminId,
      accountId: a.accountId,
      permissions: [...ALL_PERMISSIONS],
    };
    const now = Date.now();
    const access = await issueToken(database.db, 'access', grant, now);
    const refresh = await issueToken(database.db, 'refresh', grant, now);
    // A full run outlives the access token's hour (the SQLite import alone took minutes): the
    // bench's token lasts a day, so no row late in the run answers 401.
    await untyped(database.db)
      .updateTable('oauth_tokens')
      .set({ expires_at: now + 24 * 3600 * 1000 })
      .where('id', '=', access.id)
      .execute();
    return { access: access.token, refresh: refresh.token };
  } finally {
    await database.close();
  }
}

/** The id of an account's Employee role (what a user created without a role gets). */
export async function employeeRoleOf(copy: WorkingCopy, accountId: number): Promise<number> {
  const database = copy.open();
  try {
    return (
      await database.db
        .selectFrom('roles')
        .select('id')
        .where('account_id', '=', accountId)
        .where('kind', '=', 'employee')
        .executeTakeFirstOrThrow()
    ).id;
  } finally {
    await database.close();
  }
}
