import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { connect, type Database, type Dialect } from '../src/db/index.js';
import { createAccount } from '../src/accounts/service.js';
import { ALL_PERMISSIONS } from '../src/auth/permissions.js';
import { hashToken, randomToken } from '../src/auth/secrets.js';
import { issueToken } from '../src/oauth/tokens.js';

/** Every storage suite runs once per dialect; PostgreSQL only when TEST_DATABASE_URL is set. */
export const DIALECTS: Dialect[] = ['sqlite', 'postgres'];
export const PG_URL = process.env.TEST_DATABASE_URL;
/** node:test's `skip` option: a reason when the dialect cannot run here, so it is reported as skipped. */
/** With FSM_REQUIRE_ALL=1 (set by .ci/run) nothing may skip: a missing database fails instead. */
export const skipUnless = (dialect: Dialect): string | false =>
  dialect === 'postgres' && !PG_URL && process.env.FSM_REQUIRE_ALL !== '1' ? 'TEST_DATABASE_URL is not set' : false;

export interface TestDb {
  database: Database;
  config: Config;
  dataDir: string;
  close(): Promise<void>;
}

/** A fresh, migrated database: a temporary SQLite file, or a new PostgreSQL database. */
export async function createTestDb(dialect: Dialect): Promise<TestDb> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-test-'));
  let databaseUrl: string | undefined;
  let drop = async () => {};
  if (dialect === 'postgres') {
    if (!PG_URL) throw new Error('TEST_DATABASE_URL is not set');
    const name = `fsm_t_${crypto.randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(PG_URL);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    drop = async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  }
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PORT: '0' } as NodeJS.ProcessEnv);
  const database = await connect({ databaseUrl, sqliteFile: path.join(dataDir, 'fsm.sqlite'), poolSize: 5 });
  return {
    database,
    config,
    dataDir,
    async close() {
      await database.close();
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestApp extends TestDb {
  app: FastifyInstance;
  /** A settable clock: tests move time forward with `clock.now += ms`. */
  clock: { now: number };
}

export async function createTestApp(dialect: Dialect): Promise<TestApp> {
  const db = await createTestDb(dialect);
  const clock = { now: Date.now() };
  const app = await buildApp({ config: db.config, database: db.database, clock: () => clock.now });
  await app.ready();
  return {
    ...db,
    app,
    clock,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

let clientCounter = 0;
/** Registers a certified client directly in storage (the CLI does the same through its command). */
export async function createClient(database: Database, opts: { permissions?: string[]; redirectUris?: string[] } = {}) {
  const clientId = `test-client-${++clientCounter}-${crypto.randomBytes(4).toString('hex')}`;
  const clientSecret = randomToken();
  await database.db
    .insertInto('oauth_clients')
    .values({
      client_id: clientId,
      secret_hash: hashToken(clientSecret),
      name: 'Test client',
      redirect_uris: JSON.stringify(opts.redirectUris ?? ['http://127.0.0.1/callback']),
      permissions: JSON.stringify(opts.permissions ?? ALL_PERMISSIONS),
      allow_permission_choice: 0,
      certified: 1,
      revoked: 0,
      created: Date.now(),
    })
    .execute();
  return { clientId, clientSecret };
}

export interface Tenant {
  accountId: number;
  adminId: number;
  login: string;
  password: string;
  token: string;
  clientId: string;
  roleIds: Record<'administrator' | 'employee' | 'contractor', number>;
  /** An access token for another user of this account, with the given permissions. */
  tokenFor(userId: number, permissions?: string[]): Promise<string>;
}

let tenantCounter = 0;
/** An account with its Administrator and an access token holding every permission. */
export async function createTenant(t: TestApp, name = 'Acme'): Promise<Tenant> {
  const n = ++tenantCounter;
  const login = `admin${n}-${crypto.randomBytes(3).toString('hex')}`;
  const password = 'correct horse battery';
  const { account, user } = await createAccount(t.database, {
    companyName: `${name} ${n}`, firstName: 'Ada', lastName: 'Admin', mobile: '+441234567890', login, password,
  });
  const { clientId } = await createClient(t.database);
  const roles = await t.database.db.selectFrom('roles').select(['id', 'kind']).where('account_id', '=', account.id).execute();
  const tokenFor = async (userId: number, permissions: string[] = [...ALL_PERMISSIONS]) =>
    (await issueToken(t.database.db, 'access', { clientId, userId, accountId: account.id, permissions }, t.clock.now)).token;
  return {
    accountId: account.id,
    adminId: user.id,
    login,
    password,
    clientId,
    token: await tokenFor(user.id),
    roleIds: Object.fromEntries(roles.map((r) => [r.kind, r.id])) as Tenant['roleIds'],
    tokenFor,
  };
}

/** Calls the API as a client does: bearer token, X-Version 1.0, JSON body. */
export async function call(app: FastifyInstance, token: string | undefined, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const opts: InjectOptions = {
    method: method as InjectOptions['method'],
    url,
    headers: {
      'x-version': '1.0',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  };
  const res = await app.inject(opts);
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  try {
    json = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: json, raw: res.body };
}

/** A valid new user item. */
export function newUser(accountId: number, extra: Record<string, unknown> = {}) {
  return { account: { id: accountId }, firstName: 'Bob', lastName: 'Builder', mobile: '+447700900123', ...extra };
}
