import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../../src/accounts/service.js';
import { ALL_PERMISSIONS } from '../../src/collections/index.js';
import { issueToken } from '../../src/auth/tokens.js';
import { PG_URL, createClient, createTestDb, formEncode, type TestDb } from '../helpers.js';
import { HAPROXY, deploy, haproxyConfig, type Deployment } from './balancer.js';
import { headers, request, sleep } from './process.js';
import { startS3, type TestS3 } from '../s3.js';

/**
 * The deployment of docs/deployment.md: two server processes behind HAProxy sharing one PostgreSQL
 * and Redis. Through the balancer and on each process directly, what one process did the other
 * sees at once (sessions, tokens, revocations, rate limits); one process SIGKILLed under write
 * load loses no acknowledged write and the balancer carries on with the other.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIRECT = 'http://127.0.0.1/callback';
const PASSWORD = 'correct horse battery';
const API_LIMIT = 20;

const redisUp = await new Promise<boolean>((resolve) => {
  const u = new URL(REDIS_URL);
  const s = net.connect(Number(u.port || 6379), u.hostname);
  s.setTimeout(500);
  s.on('connect', () => (s.destroy(), resolve(true)));
  s.on('error', () => resolve(false));
  s.on('timeout', () => (s.destroy(), resolve(false)));
});
/** With FSM_REQUIRE_ALL=1 (.ci/run) nothing may skip: a missing piece fails the suite instead. */
const skip =
  process.env.FSM_REQUIRE_ALL === '1'
    ? false
    : !PG_URL
      ? 'TEST_DATABASE_URL is not set'
      : !HAPROXY
        ? 'haproxy is not installed (apt-get install -y haproxy)'
        : !redisUp
          ? `no Redis at ${REDIS_URL}`
          : false;

/** The block of docs/deployment.md between `<!-- name:start -->` and `<!-- name:end -->`, without the fence. */
function docBlock(name: string): string {
  const text = fs.readFileSync(path.join(ROOT, 'docs/deployment.md'), 'utf8');
  const m = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(text);
  assert.ok(m, `docs/deployment.md has no ${name} block`);
  return m[1].replace(/^```\w*\n/, '').replace(/```\n$/, '');
}

test('docs/deployment.md shows the HAProxy configuration this test runs', () => {
  const shown = haproxyConfig({
    bind: '127.0.0.1:8080',
    servers: [
      ['a', '127.0.0.1:8081'],
      ['b', '127.0.0.1:8082'],
    ],
    healthPath: '/healthz',
  });
  assert.equal(docBlock('haproxy.cfg'), shown);
});

interface Setup {
  db: TestDb;
  env: Record<string, string>;
  accountId: number;
  adminId: number;
  login: string;
  clientId: string;
  clientSecret: string;
}

async function setup(apiLimit: number): Promise<Setup> {
  const db = await createTestDb('postgres');
  const login = `lb-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const { account, user } = await createAccount(db.services.writer, {
    companyName: 'Two Hosts Ltd',
    firstName: 'Ada',
    lastName: 'Admin',
    mobile: '+441234567890',
    login,
    password: PASSWORD,
  });
  const { clientId, clientSecret } = await createClient(db.database, { redirectUris: [REDIRECT] });
  const env = {
    DATA_DIR: db.dataDir,
    DATABASE_URL: db.config.databaseUrl!,
    REDIS_URL,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_API: String(apiLimit),
    RATE_LIMIT_AUTH: '0',
    WORKERS: '1',
    TRUST_PROXY: '127.0.0.1',
  };
  return { db, env, accountId: account.id, adminId: user.id, login, clientId, clientSecret };
}

/** A minimal browser: cookies by name, forms posted, redirects not followed. */
function browser() {
  const jar = new Map<string, string>();
  return async (url: string, form?: Record<string, string>) => {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        ...(jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? formEncode(form) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get('location') ?? '', html: await res.text() };
  };
}
const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
const actionOf = (html: string) => (/<form[^>]* action="([^"]*)"/.exec(html)?.[1] ?? '').replace(/&amp;/g, '&');

const cli = (s: Setup, ...args: string[]) => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/src/cli/index.js'), ...args], {
    env: { ...process.env, ...s.env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};

describe('two processes behind HAProxy on one PostgreSQL and Redis', { skip }, () => {
  let s: Setup;
  let d: Deployment;
  let a: string;
  let b: string;
  before(
    async () => {
      s = await setup(API_LIMIT);
      d = await deploy(s.env);
      a = d.backends.a.origin;
      b = d.backends.b.origin;
    },
    { timeout: 90_000 },
  );
  after(async () => {
    await d?.close();
    await s?.db.close();
  });

  test('the balancer sends requests to both processes', { timeout: 60_000 }, async (t) => {
    const { token } = await issueToken(
      s.db.database.db,
      'access',
      { clientId: s.clientId, userId: s.adminId, accountId: s.accountId, permissions: ['users.read'] },
      Date.now(),
    );
    const by = new Set<string>();
    for (let i = 0; i < 4; i++)
      by.add((await request(d.origin, token, 'GET', '/users')).headers?.get('x-served-by') ?? '');
    assert.deepEqual([...by].sort(), ['a', 'b']);
    t.diagnostic(`health check: GET ${d.healthPath}`);
  });

  test(
    'a session made on one process signs in on the other; the token issued once works on both',
    { timeout: 60_000 },
    async () => {
      const go = browser();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: s.clientId,
        redirect_uri: REDIRECT,
        scope: 'default',
        state: 'st',
        access_type: 'offline',
      });
      const loginPage = await go(`${a}/oauth2/code?${query}`);
      assert.equal(loginPage.status, 200);
      assert.match(loginPage.html, /name="password"/);
      const signedIn = await go(`${a}${actionOf(loginPage.html)}`, {
        csrf: field(loginPage.html, 'csrf'),
        login: s.login,
        password: PASSWORD,
      });
      assert.equal(signedIn.status, 303, signedIn.html.slice(0, 300));
      // Process b knows the session a started: straight to consent.
      const consent = await go(`${b}/oauth2/code?${query}`);
      assert.equal(consent.status, 200);
      assert.doesNotMatch(consent.html, /name="password"/);
      const allowed = await go(`${b}${actionOf(consent.html)}`, {
        csrf: field(consent.html, 'csrf'),
        decision: 'allow',
      });
      assert.equal(allowed.status, 302);
      const code = new URL(allowed.location).searchParams.get('code')!;
      const tokenRes = await fetch(`${d.origin}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: formEncode({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: s.clientId,
          client_secret: s.clientSecret,
        }),
      });
      assert.equal(tokenRes.status, 200);
      const tokens = (await tokenRes.json()) as { access_token: string; refresh_token: string };
      for (const origin of [a, b, d.origin])
        assert.equal((await request(origin, tokens.access_token, 'GET', '/users')).status, 200, origin);
      // The refresh token works on the other process, and what it gives works on the first.
      const refreshed = await fetch(`${b}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: formEncode({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: s.clientId,
          client_secret: s.clientSecret,
        }),
      });
      assert.equal(refreshed.status, 200);
      const second = ((await refreshed.json()) as { access_token: string }).access_token;
      assert.equal((await request(a, second, 'GET', '/users')).status, 200);
      // The code replayed on one process revokes what it issued (RFC 6749 §4.1.2), on both at once.
      const replay = await fetch(`${a}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: formEncode({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: s.clientId,
          client_secret: s.clientSecret,
        }),
      });
      assert.equal(replay.status, 400);
      for (const origin of [b, a, d.origin]) {
        assert.equal((await request(origin, tokens.access_token, 'GET', '/users')).status, 401, origin);
        assert.equal((await request(origin, second, 'GET', '/users')).status, 401, origin);
      }
    },
  );

  test('a client revoked with the CLI loses its tokens on both processes at once', { timeout: 60_000 }, async () => {
    const { clientId } = await createClient(s.db.database);
    const { token } = await issueToken(
      s.db.database.db,
      'access',
      { clientId, userId: s.adminId, accountId: s.accountId, permissions: ['users.read'] },
      Date.now(),
    );
    for (const origin of [a, b]) assert.equal((await request(origin, token, 'GET', '/users')).status, 200, origin);
    assert.deepEqual(cli(s, 'clients', 'revoke', clientId), { clientId, revoked: true });
    for (const origin of [b, a, d.origin])
      assert.equal((await request(origin, token, 'GET', '/users')).status, 401, origin);
  });

  test('a user deleted through one process loses its token on both at once', { timeout: 60_000 }, async () => {
    const { clientId } = await createClient(s.db.database);
    const admin = (
      await issueToken(
        s.db.database.db,
        'access',
        { clientId, userId: s.adminId, accountId: s.accountId, permissions: [...ALL_PERMISSIONS] },
        Date.now(),
      )
    ).token;
    const created = await request(a, admin, 'POST', '/users', {
      users: [{ account: { id: s.accountId }, firstName: 'Gone', lastName: 'Soon', mobile: '+447700900123' }],
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const userId = created.body.users[0].id as number;
    const { token } = await issueToken(
      s.db.database.db,
      'access',
      { clientId, userId, accountId: s.accountId, permissions: ['users.read'] },
      Date.now(),
    );
    for (const origin of [a, b]) assert.equal((await request(origin, token, 'GET', '/users')).status, 200);
    assert.equal((await request(a, admin, 'DELETE', `/users/${userId}`)).status, 200);
    for (const origin of [b, a]) assert.equal((await request(origin, token, 'GET', '/users')).status, 401, origin);
  });

  test('the rate limit is one counter across both processes (Redis)', { timeout: 60_000 }, async () => {
    // A fresh token: its window starts with its first request, so all of them count in one window.
    const { token } = await issueToken(
      s.db.database.db,
      'access',
      { clientId: s.clientId, userId: s.adminId, accountId: s.accountId, permissions: ['users.read'] },
      Date.now(),
    );
    const statuses: Record<string, number[]> = { a: [], b: [] };
    for (let i = 0; i < API_LIMIT + 6; i++) {
      const name = i % 2 ? 'b' : 'a';
      const res = await request(d.backends[name].origin, token, 'GET', '/users');
      statuses[name].push(res.status);
      if (res.status === 200) assert.equal(res.headers?.get('ratelimit-remaining'), String(API_LIMIT - i - 1));
    }
    const ok = [...statuses.a, ...statuses.b].filter((x) => x === 200).length;
    assert.equal(ok, API_LIMIT, JSON.stringify(statuses));
    // Both processes refuse once the shared budget is spent.
    assert.equal(statuses.a.at(-1), 429);
    assert.equal(statuses.b.at(-1), 429);
  });
});

interface Write {
  marker: string;
  sentAt: number;
  status?: number;
  by?: string;
  error?: string;
}

/** POST through the balancer; a connection that ended without an answer is status 0, with the reason. */
async function post(
  origin: string,
  token: string,
  path: string,
  body: unknown,
): Promise<{ status: number; by?: string; error?: string }> {
  try {
    const res = await fetch(`${origin}${path}`, {
      method: 'POST',
      headers: headers(token),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    await res.arrayBuffer();
    return { status: res.status, by: res.headers.get('x-served-by') ?? undefined };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { status: 0, error: cause?.code ?? cause?.message ?? (err as Error).message };
  }
}

describe('one of two processes SIGKILLed under write load behind HAProxy', { skip }, () => {
  test(
    'no acknowledged write is lost; the balancer carries on with the other process',
    { timeout: 120_000 },
    async (t) => {
      const s = await setup(0);
      let d: Deployment | undefined;
      try {
        d = await deploy(s.env);
        const origin = d.origin;
        const { token } = await issueToken(
          s.db.database.db,
          'access',
          { clientId: s.clientId, userId: s.adminId, accountId: s.accountId, permissions: [...ALL_PERMISSIONS] },
          Date.now(),
        );
        const writes: Write[] = [];
        const started = Date.now();
        let killedAt = Infinity;
        const size = 3;
        // Bounded in time (6 s) and in count (2,000 requests).
        const stop = () => Date.now() - started > 6000 || writes.length >= 2000;
        const worker = async (w: number) => {
          for (let n = 0; !stop(); n++) {
            const write: Write = { marker: `w${w}-${n}`, sentAt: Date.now() };
            writes.push(write);
            Object.assign(
              write,
              await post(origin, token, '/users', {
                users: Array.from({ length: size }, () => ({
                  account: { id: s.accountId },
                  firstName: 'Load',
                  lastName: write.marker,
                  mobile: '+447700900123',
                })),
              }),
            );
          }
        };
        const load = Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
        await sleep(2000);
        d.backends.a.child.kill('SIGKILL');
        killedAt = Date.now();
        await d.backends.a.exited;
        await load;

        const count = async (marker: string) =>
          Number(
            (
              await s.db.database.db
                .selectFrom('users')
                .select((eb) => eb.fn.countAll().as('n'))
                .where('account_id', '=', s.accountId)
                .where('last_name', '=', marker)
                .executeTakeFirstOrThrow()
            ).n,
          );
        let acked = 0;
        for (const w of writes) {
          const n = await count(w.marker);
          if (w.status === 200) {
            acked++;
            assert.equal(n, size, `acknowledged write ${w.marker} (served by ${w.by}): ${n} of ${size} users found`);
          } else {
            assert.ok(n === 0 || n === size, `unacknowledged write ${w.marker} partly applied: ${n} of ${size}`);
          }
        }
        const before = writes.filter((w) => w.sentAt < killedAt);
        const afterKill = writes.filter((w) => w.sentAt >= killedAt);
        const settled = writes.filter((w) => w.sentAt >= killedAt + 1500);
        assert.ok(
          new Set(before.filter((w) => w.status === 200).map((w) => w.by)).size === 2,
          'both processes took writes before the kill',
        );
        // Only requests in flight at the kill may fail: the balancer's 502/503, or a connection it
        // closed without an answer (status 0: it does that when a reused server connection dies).
        for (const w of writes.filter((x) => x.status !== 200))
          assert.ok(
            [0, 502, 503].includes(w.status!) && w.sentAt < killedAt + 1500,
            `${w.marker}: ${w.status} ${w.error ?? ''} at +${w.sentAt - killedAt} ms`,
          );
        assert.ok(settled.length >= 20, `too few writes after the kill to prove anything (${settled.length})`);
        assert.ok(
          settled.every((w) => w.status === 200 && w.by === 'b'),
          'after the kill every write succeeds on the surviving process',
        );
        const after = await request(origin, token, 'GET', '/users?recordsPerPage=1');
        assert.equal(after.status, 200);
        assert.equal(after.headers?.get('x-served-by'), 'b');
        const failedAt = writes.filter((w) => w.status !== 200).map((w) => w.sentAt - killedAt);
        t.diagnostic(
          `${writes.length} writes of ${size} users (${before.length} before the SIGKILL, ${afterKill.length} after); ${acked} acknowledged, all found; ` +
            `${writes.length - acked} failed (${
              writes
                .filter((w) => w.status !== 200)
                .map((w) => w.status || w.error)
                .join(', ') || 'none'
            }), sent ${failedAt.join(', ') || '-'} ms from the kill`,
        );
      } finally {
        await d?.close();
        await s.db.close();
      }
    },
  );
});

/** A raw-body upload whose second half is sent only once `gate` resolves; the answer's status, or 0 without one. */
function gatedUpload(origin: string, token: string, first: Buffer, gate: Promise<void>, rest: Buffer) {
  return new Promise<number>((resolve) => {
    const { hostname, port } = new URL(origin);
    const req = http.request(
      {
        host: hostname,
        port,
        method: 'POST',
        path: '/files/upload?name=half.bin',
        headers: {
          authorization: `Bearer ${token}`,
          'x-version': '1.0',
          'content-type': 'application/octet-stream',
          'content-length': first.length + rest.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.write(first);
    void gate.then(() => req.end(rest));
  });
}

describe('files across two processes on one S3 store, each with its own DATA_DIR', { skip }, () => {
  let s: Setup;
  let s3: TestS3;
  let d: Deployment;
  let token: string;
  const dataDirs: Record<string, string> = {};
  before(
    async () => {
      s = await setup(0);
      s3 = await startS3();
      d = await deploy({ ...s.env, ...s3.env }, (name) => ({
        DATA_DIR: (dataDirs[name] = fs.mkdtempSync(path.join(os.tmpdir(), `fsm-host-${name}-`))),
      }));
      token = (
        await issueToken(
          s.db.database.db,
          'access',
          { clientId: s.clientId, userId: s.adminId, accountId: s.accountId, permissions: [...ALL_PERMISSIONS] },
          Date.now(),
        )
      ).token;
    },
    { timeout: 90_000 },
  );
  after(async () => {
    await d?.close();
    await s3?.close();
    await s?.db.close();
    for (const dir of Object.values(dataDirs)) fs.rmSync(dir, { recursive: true, force: true });
  });

  const upload = async (origin: string, name: string, bytes: Buffer) => {
    const res = await fetch(`${origin}/files/upload?name=${name}`, {
      method: 'POST',
      headers: { ...headers(token), 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const fileCount = async () =>
    Number(
      (
        await s.db.database.db
          .selectFrom('files')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('account_id', '=', s.accountId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  test(
    'a file uploaded through one process downloads byte for byte through the other',
    { timeout: 60_000 },
    async () => {
      for (const [from, to] of [
        ['a', 'b'],
        ['b', 'a'],
      ]) {
        // Binary, over two parts of the store's multipart upload.
        const bytes = Buffer.concat([
          Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
          crypto.randomBytes(11 << 20),
        ]);
        const up = await upload(d.backends[from].origin, `${from}.bin`, bytes);
        assert.equal(up.status, 200, JSON.stringify(up.body));
        const { downloadUrl } = up.body.files[0];
        assert.ok(
          downloadUrl.startsWith(`${d.origin}/file-downloads/`),
          'the link is on the public origin, not the store',
        );
        const link = new URL(downloadUrl);
        for (const origin of [d.backends[to].origin, d.origin]) {
          const res = await fetch(`${origin}${link.pathname}${link.search}`, { redirect: 'manual' });
          assert.equal(res.status, 200, `${origin}: served, never redirected to the store`);
          assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), `${from} → ${origin}`);
        }
      }
      // Nothing of the uploads on either process's disk.
      for (const [name, dir] of Object.entries(dataDirs)) {
        const files = path.join(dir, 'files');
        const left = fs.existsSync(files) ? fs.readdirSync(files, { recursive: true }) : [];
        assert.deepEqual(
          left.filter((f) => !String(f).endsWith('tmp')),
          [],
          `${name}'s DATA_DIR/files`,
        );
      }
    },
  );

  test(
    'the store killed in the middle of an upload: nothing half-written once it is back (no item, no object, no multipart upload)',
    { timeout: 90_000 },
    async () => {
      const n = await fileCount();
      const objects = await s3.keys();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const answer = gatedUpload(
        d.backends.a.origin,
        token,
        crypto.randomBytes(6 << 20),
        gate,
        crypto.randomBytes(6 << 20),
      );
      for (let i = 0; i < 200 && (await s3.uploads()).length === 0; i++) await sleep(50);
      assert.equal((await s3.uploads()).length, 1, 'a multipart upload under way');
      await s3.kill();
      release();
      const status = await answer;
      assert.ok([503, 0].includes(status), `the upload answered ${status}`);
      assert.equal(await fileCount(), n, 'no item');
      await s3.start();
      // The process retries the abort the store could not take (every 10 s).
      let pending = await s3.uploads();
      for (const deadline = Date.now() + 30_000; pending.length && Date.now() < deadline; pending = await s3.uploads())
        await sleep(500);
      assert.deepEqual(pending, [], 'no multipart upload left');
      assert.deepEqual(await s3.keys(), objects, 'no object left');
      // The store is back: both processes upload again.
      for (const origin of [d.backends.a.origin, d.backends.b.origin])
        assert.equal((await upload(origin, 'after.bin', crypto.randomBytes(1000))).status, 200);
    },
  );
});
