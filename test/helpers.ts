import crypto from 'node:crypto';
import { after, before } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { connect, openDatabase, type Database, type Dialect, type QueryObserver } from '../src/db/index.js';
import { migrateTo } from '../src/db/migrate.js';
import { createServices, type Services } from '../src/services.js';
import { createAccount } from '../src/accounts/service.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { issueToken } from '../src/auth/tokens.js';
import { certifyClient, registerClient } from '../src/oauth/grants/clients.js';

/** Every storage suite runs once per dialect; PostgreSQL only when TEST_DATABASE_URL is set. */
export const DIALECTS: Dialect[] = ['sqlite', 'postgres'];
export const PG_URL = process.env.TEST_DATABASE_URL;
/** node:test's `skip` option: a reason when the dialect cannot run here, so it is reported as skipped. */
/** With FSM_REQUIRE_ALL=1 (set by .ci/run) nothing may skip: a missing database fails instead. */
export const skipUnless = (dialect: Dialect): string | false =>
  dialect === 'postgres' && !PG_URL && process.env.FSM_REQUIRE_ALL !== '1' ? 'TEST_DATABASE_URL is not set' : false;

export interface TestDb {
  database: Database;
  /** The registry and write pipeline on this database, as the server makes them. */
  services: Services;
  config: Config;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database: a temporary SQLite file, or a new PostgreSQL database. `upTo`: only
 * the migrations up to that one, as an older release left the database.
 */
export async function createTestDb(
  dialect: Dialect,
  opts: { observe?: QueryObserver; upTo?: string; env?: Record<string, string> } = {},
): Promise<TestDb> {
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
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    PORT: '0',
    ...opts.env,
  } as NodeJS.ProcessEnv);
  const options = { databaseUrl, sqliteFile: path.join(dataDir, 'fsm.sqlite'), poolSize: 5, observe: opts.observe };
  const database = opts.upTo ? openDatabase(options) : await connect(options);
  if (opts.upTo) await migrateTo(database, opts.upTo);
  const services = createServices(config, database);
  const testDb: TestDb = {
    database,
    services,
    config,
    dataDir,
    // The database open now: a test may reopen it (a new process on the same storage).
    async close() {
      await services.blobs.close();
      await testDb.database.close();
      await drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return testDb;
}

export interface TestApp extends TestDb {
  app: FastifyInstance;
  /** A settable clock: tests move time forward with `clock.now += ms`. */
  clock: { now: number };
}

export async function createTestApp(
  dialect: Dialect,
  opts: { deliveries?: boolean; observe?: QueryObserver; env?: Record<string, string> } = {},
): Promise<TestApp> {
  const db = await createTestDb(dialect, { observe: opts.observe, env: opts.env });
  const clock = { now: Date.now() };
  const app = await buildApp({
    config: db.config,
    database: db.database,
    clock: () => clock.now,
    deliveries: opts.deliveries,
    // FSM_TEST_LOG=1 shows the server's errors (a 500's cause) while a test is looked into.
    logger: process.env.FSM_TEST_LOG ? { level: 'error' } : false,
  });
  await app.ready();
  await checkResponsesAgainstOpenApi(app);
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

/**
 * Registers and certifies a client through the same code the CLI uses. Redirect URIs are then
 * stored as given, even ones registration refuses, so tests can prove the server re-checks them.
 */
export async function createClient(database: Database, opts: { permissions?: string[]; redirectUris?: string[] } = {}) {
  const { clientId, clientSecret } = await registerClient(database, {
    name: 'Test client',
    redirectUris: ['http://127.0.0.1/callback'],
    permissions: opts.permissions,
  });
  await certifyClient(database, clientId);
  if (opts.redirectUris) {
    await database.db
      .updateTable('oauth_clients')
      .set({ redirect_uris: JSON.stringify(opts.redirectUris) })
      .where('client_id', '=', clientId)
      .execute();
  }
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
  const { account, user } = await createAccount(t.services.writer, {
    companyName: `${name} ${n}`,
    firstName: 'Ada',
    lastName: 'Admin',
    mobile: '+441234567890',
    login,
    password,
  });
  const { clientId } = await createClient(t.database);
  const roles = await t.database.db
    .selectFrom('roles')
    .select(['id', 'kind'])
    .where('account_id', '=', account.id)
    .execute();
  const tokenFor = async (userId: number, permissions: string[] = [...ALL_PERMISSIONS]) =>
    (await issueToken(t.database.db, 'access', { clientId, userId, accountId: account.id, permissions }, t.clock.now))
      .token;
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
export async function call(
  app: FastifyInstance,
  token: string | undefined,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
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
  let json: any;
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

/** Creates a user with the given role (as the tenant's Administrator); returns its id and an access token. */
export async function addUser(
  t: TestApp,
  tenant: Tenant,
  role: keyof Tenant['roleIds'] = 'employee',
  extra: Record<string, unknown> = {},
) {
  const res = await call(t.app, tenant.token, 'POST', '/users', {
    users: [newUser(tenant.accountId, { role: { id: tenant.roleIds[role] }, ...extra })],
  });
  if (res.status !== 200) throw new Error(`addUser failed: ${res.raw}`);
  const id = res.body.users[0].id as number;
  return { id, token: await tenant.tokenFor(id) };
}

/** The errors of a failure envelope as `code:field` strings, in order, for compact assertions. */
export function errorsOf(res: { body: any }): string[] {
  return (res.body?.failures ?? []).flatMap((f: { errors: { code: number; field?: string }[] }) =>
    f.errors.map((e) => `${e.code}:${e.field ?? ''}`),
  );
}

/** Account A's token on B's item: GET is 404, PATCH and DELETE fail, and B still reads it unchanged. */
export async function assertIsolated(
  t: TestApp,
  a: Tenant,
  b: Tenant,
  collection: string,
  id: number,
  patch: Record<string, unknown>,
) {
  // Imported here because helpers are only appended to this file (its imports belong to the lead).
  const assert: typeof import('node:assert').strict = (await import('node:assert')).strict;
  const before = await call(t.app, b.token, 'GET', `/${collection}/${id}?fields=*`);
  assert.equal(before.status, 200);
  assert.equal((await call(t.app, a.token, 'GET', `/${collection}/${id}`)).status, 404);
  const patched = await call(t.app, a.token, 'PATCH', `/${collection}`, { [collection]: [{ id, ...patch }] });
  assert.equal(patched.status, 422);
  assert.deepEqual(errorsOf(patched), ['1047:id']);
  const deleted = await call(t.app, a.token, 'DELETE', `/${collection}`, { [collection]: [{ id }] });
  assert.equal(deleted.status, 422);
  assert.deepEqual(errorsOf(deleted), ['1047:id']);
  assert.equal((await call(t.app, a.token, 'DELETE', `/${collection}/${id}`)).status, 422);
  assert.deepEqual((await call(t.app, b.token, 'GET', `/${collection}/${id}?fields=*`)).body, before.body);
}

/** A batch of one good and one bad item fails as a whole: nothing is saved. */
export async function assertAtomicBatch(
  t: TestApp,
  tenant: Tenant,
  collection: string,
  good: Record<string, unknown>,
  bad: Record<string, unknown>,
) {
  const assert: typeof import('node:assert').strict = (await import('node:assert')).strict;
  const count = async () =>
    (await call(t.app, tenant.token, 'GET', `/${collection}`)).body.metadata.recordsCount as number;
  const n = await count();
  const res = await call(t.app, tenant.token, 'POST', `/${collection}`, { [collection]: [good, bad] });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body.metadata, { receivedItemsCount: 2, validItems: [0], invalidItems: [1] });
  assert.equal(await count(), n);
}

/** A registered client with the given options, stored as the CLI stores it (certified unless told). */
export async function createOAuthClient(
  database: Database,
  opts: {
    redirectUris?: string[];
    permissions?: string[];
    allowPermissionChoice?: boolean;
    certified?: boolean;
    name?: string;
  } = {},
) {
  const { clientId, clientSecret } = await createClient(database, {
    redirectUris: opts.redirectUris,
    permissions: opts.permissions,
  });
  await database.db
    .updateTable('oauth_clients')
    .set({
      allow_permission_choice: opts.allowPermissionChoice ? 1 : 0,
      certified: opts.certified === false ? 0 : 1,
      name: opts.name ?? 'Test client',
    })
    .where('client_id', '=', clientId)
    .execute();
  return { clientId, clientSecret };
}

export const formEncode = (form: Record<string, string | string[]>) =>
  new URLSearchParams(
    Object.entries(form).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
  ).toString();

/** A browser stand-in over app.inject: keeps cookies, posts forms. */
export function injectBrowser(app: FastifyInstance) {
  const jar = new Map<string, string>();
  async function request(
    method: 'GET' | 'POST',
    url: string,
    form?: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ) {
    const res = await app.inject({
      method,
      url,
      headers: {
        ...(jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      payload: form ? formEncode(form) : undefined,
    });
    for (const c of res.cookies as { name: string; value: string }[]) jar.set(c.name, c.value);
    return res;
  }
  return { jar, request };
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
/** The action of the page's form and the value of one of its hidden inputs. */
export const formAction = (html: string) => unescapeHtml(/<form[^>]* action="([^"]*)"/.exec(html)?.[1] ?? '');
export const inputValue = (html: string, name: string) =>
  unescapeHtml(new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '');

export const codeUrl = (params: Record<string, string | undefined>) =>
  `/oauth2/code?${new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString()}`;

/**
 * Drives /oauth2/code through login (when the browser has no session) and consent; returns the
 * redirect the consent answered with, or the one /oauth2/code answered with at once when the
 * owner's consent is remembered (`skipped`).
 */
export async function authorizeWithInject(
  browser: ReturnType<typeof injectBrowser>,
  params: Record<string, string | undefined>,
  who: { login: string; password: string },
  consent: Record<string, string | string[]> = { decision: 'allow' },
) {
  // A decision other than a plain Allow is one the owner makes on the page: ask for it (prompt=consent),
  // since a remembered consent would answer without one.
  const plainAllow = Object.keys(consent).length === 1 && consent.decision === 'allow';
  const prompt = params.prompt ?? (plainAllow ? undefined : 'consent');
  let page = await browser.request('GET', codeUrl({ response_type: 'code', scope: 'default', ...params, prompt }));
  if (page.body.includes('name="password"')) {
    const login = await browser.request('POST', formAction(page.body), {
      csrf: inputValue(page.body, 'csrf'),
      login: who.login,
      password: who.password,
    });
    if (login.statusCode !== 303) throw new Error(`sign-in failed: ${login.statusCode}`);
    page = await browser.request('GET', login.headers.location as string);
  }
  // Consent remembered (docs/oauth.md): the answer comes without the page; `consent` is not used.
  const skipped = page.statusCode === 302 && !String(page.headers.location).startsWith('/');
  const res = skipped
    ? page
    : await browser.request('POST', formAction(page.body), { csrf: inputValue(page.body, 'csrf'), ...consent });
  const location = new URL(res.headers.location as string);
  return { status: res.statusCode, location, code: location.searchParams.get('code') ?? undefined, skipped };
}

/** POSTs a form to /oauth2/token and parses the JSON answer. */
export async function tokenRequest(
  app: FastifyInstance,
  form: Record<string, string | string[]>,
  headers: Record<string, string> = {},
  url = '/oauth2/token',
) {
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: formEncode(form),
  });
  return { status: res.statusCode, headers: res.headers, body: JSON.parse(res.body) };
}

/** The usual suite fixture: an app on one dialect with two accounts, `a` and `b`. */
export async function appWithTenants(
  dialect: Dialect,
  opts: { deliveries?: boolean; env?: Record<string, string> } = {},
): Promise<{ t: TestApp; a: Tenant; b: Tenant }> {
  const t = await createTestApp(dialect, opts);
  return { t, a: await createTenant(t, 'Alpha'), b: await createTenant(t, 'Beta') };
}

/**
 * A live stand-in for an object made later (in a `before` hook): every read, write, `in`, key listing
 * and spread goes to `get()`'s object, and methods are bound to it. Touched while `get()` is still
 * undefined, it throws.
 */
function standIn<T extends object>(name: string, get: () => T | undefined): T {
  const real = (): T => {
    const target = get();
    if (!target) throw new Error(`the suite fixture is used before its before() ran (${name})`);
    return target;
  };
  const bound = new WeakMap<object, unknown>();
  return new Proxy({} as T, {
    get(_, key) {
      const target = real();
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (!bound.has(value)) bound.set(value, value.bind(target));
      return bound.get(value);
    },
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor(_, key) {
      const d = Reflect.getOwnPropertyDescriptor(real(), key);
      // The empty stand-in target holds no such property: a proxy may only report it configurable.
      return d && { ...d, configurable: true };
    },
    defineProperty: (_, key, d) => Reflect.defineProperty(real(), key, d),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}

/**
 * The usual suite opening, once: called first (and synchronously) in a `describe` body, it registers
 * a `before` that makes `appWithTenants(dialect, opts)` and an `after` that closes the app if it was
 * made. The `t`, `a` and `b` it returns stand in for them (see standIn): usable in the suite's own
 * hooks (registered after this one) and tests, not while the suite is being defined.
 */
export function suiteWithTenants(
  dialect: Dialect,
  opts: { deliveries?: boolean; env?: Record<string, string> } = {},
): { t: TestApp; a: Tenant; b: Tenant } {
  let made: { t: TestApp; a: Tenant; b: Tenant } | undefined;
  before(async () => {
    made = await appWithTenants(dialect, opts);
  });
  after(() => made?.t.close());
  return {
    t: standIn('t', () => made?.t),
    a: standIn('a', () => made?.a),
    b: standIn('b', () => made?.b),
  };
}

/**
 * Wraps `app.inject` so every response a test receives is checked against the served
 * /openapi.json (status, headers, body schema): a drift between the two fails that test.
 * FSM_OPENAPI_CHECK=0 turns it off (to see a test's own failure first).
 */
export async function checkResponsesAgainstOpenApi(app: FastifyInstance): Promise<void> {
  if (process.env.FSM_OPENAPI_CHECK === '0') return;
  const { conformanceFor } = await import('./openapi-conformance.js');
  const inject = app.inject.bind(app) as (
    opts: InjectOptions | string,
  ) => Promise<import('fastify').LightMyRequestResponse>;
  const conformance = conformanceFor((await inject({ method: 'GET', url: '/openapi.json' })).body);

  (app as any).inject = (opts?: InjectOptions | string, cb?: unknown) => {
    if (opts === undefined || cb !== undefined) return (inject as any)(opts, cb);
    return inject(opts).then((res) => {
      const o: InjectOptions = typeof opts === 'string' ? { url: opts } : opts;
      const url = typeof o.url === 'string' ? o.url : String(o.path ?? '/');
      try {
        conformance.check({
          method: (o.method ?? 'GET').toUpperCase(),
          url,
          requestHeaders: lower(o.headers ?? {}),
          status: res.statusCode,
          headers: res.headers,
          body: res.body,
        });
      } catch (err) {
        // FSM_OPENAPI_LOG=file lists every drift of a whole run instead of failing at the first.
        if (!process.env.FSM_OPENAPI_LOG) throw err;
        fs.appendFileSync(process.env.FSM_OPENAPI_LOG, `${(err as Error).message.split('\n')[0]}\n`);
      }
      return res;
    });
  };
}

const lower = (h: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

/**
 * RFC 8785 canonical JSON written out by hand for the shapes the API hashes (§17's submissions,
 * §18's accepted quotes), independent of the server's canonicalizer: members sorted by their names'
 * UTF-16 code units (the default sort), values as JSON.stringify writes them (ECMAScript's number
 * form, which RFC 8785 adopts), no whitespace.
 */
export function canonicalByHand(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalByHand).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalByHand((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
