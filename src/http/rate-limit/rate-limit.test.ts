import { after, before, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { createClient } from 'redis';
import { buildApp } from '../../app.js';
import { hashToken } from '../../auth/secrets.js';
import {
  DIALECTS,
  call,
  createOAuthClient,
  createTenant,
  createTestApp,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../../test/helpers.js';
import { WINDOW_MS } from './index.js';
import { openRedisStore } from './redis.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The four headers of spec §1.7 and the error envelope. */
function assertRefused(res: { status: number; headers: Record<string, unknown>; body: any }, limit: number) {
  assert.equal(res.status, 429);
  assert.equal(res.body.result, 'error');
  assert.equal(res.body.error.code, 1429);
  assert.equal(res.body.error.type, 'client');
  assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['pragma'], 'no-cache');
  assert.equal(res.headers['x-version'], '1.0');
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  const retry = Number(res.headers['retry-after']);
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  assert.equal(res.headers['ratelimit-reset'], String(retry));
}

/** Redis counters outlive a run and are shared with other runs: each test counts from its own addresses. */
const randomAddress = () => `10.${[...crypto.randomBytes(3)].join('.')}`;
const form = (
  t: TestApp,
  url: string,
  fields: Record<string, string>,
  ip = '127.0.0.1',
  headers: Record<string, string> = {},
) =>
  t.app.inject({
    method: 'POST',
    url,
    remoteAddress: ip,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
const post = (t: TestApp, url: string, ip = '127.0.0.1') =>
  t.app.inject({
    method: 'POST',
    url,
    remoteAddress: ip,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'grant_type=x',
  });

/**
 * The window's end, as each store sees it: the in-process store reads Date.now() (mocked here), a
 * Redis key expires on the server (its expiry, done now).
 */
type EndWindow = (bucket: string) => Promise<void>;
const endLocalWindow: EndWindow = async () => mock.timers.tick(WINDOW_MS);
const apiBucket = (token: string) => `api:${hashToken(token)}`;

function rateLimitSuite(name: string, dialect: (typeof DIALECTS)[number], redisUrl?: string) {
  describe(name, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    let endWindow: EndWindow = endLocalWindow;
    before(async () => {
      t = await createTestApp(dialect);
      if (redisUrl) {
        // The same app, counting in Redis instead of in process.
        await t.app.close();
        t.config.redisUrl = redisUrl;
        const app = await buildApp({ config: t.config, database: t.database, clock: () => t.clock.now });
        await app.ready();
        const redis = createClient({ url: redisUrl });
        await redis.connect();
        endWindow = async (bucket) => void (await redis.del(`fsm:rl:${bucket}`));
        const close = t.close;
        t = { ...t, app, close: async () => (await redis.close(), await app.close(), await close()) };
      } else {
        // The in-process store's windows follow Date.now(): mocked, so a window ends when a test says.
        mock.timers.enable({ apis: ['Date'], now: Date.now() });
      }
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
    });
    after(async () => {
      mock.timers.reset();
      await t?.close();
    });

    test('per access token: headers count down, the next request is 429 with Retry-After, a new window resets', async () => {
      t.config.rateLimitApi = 3;
      try {
        const token = await a.tokenFor(a.adminId);
        for (const left of [2, 1, 0]) {
          const r = await call(t.app, token, 'GET', '/users');
          assert.equal(r.status, 200);
          assert.equal(r.headers['ratelimit-limit'], '3');
          assert.equal(r.headers['ratelimit-remaining'], String(left));
          const reset = Number(r.headers['ratelimit-reset']);
          assert.ok(reset >= 59 && reset <= 60, `a window of a minute from the first request: ${reset}`);
        }
        const refused = await call(t.app, token, 'POST', '/users', { users: [] });
        assertRefused(refused, 3);
        // Another token has its own budget.
        assert.equal((await call(t.app, b.token, 'GET', '/users')).status, 200);
        await endWindow(apiBucket(token));
        const fresh = await call(t.app, token, 'GET', '/users');
        assert.equal(fresh.status, 200);
        assert.equal(fresh.headers['ratelimit-remaining'], '2');
      } finally {
        t.config.rateLimitApi = 600;
      }
    });

    test('a refused or unauthenticated request spends nothing of a token budget', async () => {
      t.config.rateLimitApi = 2;
      try {
        const token = await a.tokenFor(a.adminId);
        for (let i = 0; i < 5; i++) assert.equal((await call(t.app, undefined, 'GET', '/users')).status, 401);
        assert.equal((await call(t.app, 'not-a-token', 'GET', '/users')).status, 401);
        const r = await call(t.app, token, 'GET', '/users');
        assert.equal(r.headers['ratelimit-remaining'], '1');
      } finally {
        t.config.rateLimitApi = 600;
      }
    });

    test('RATE_LIMIT_AUTH on the pages counts per client address; a 429 there is an HTML page with Retry-After', async () => {
      const client = await createOAuthClient(t.database);
      t.config.rateLimitAuth = 2;
      try {
        const here = randomAddress();
        const page = (url: string, ip = here) => t.app.inject({ method: 'GET', url, remoteAddress: ip });
        for (const left of [1, 0]) {
          const r = await page('/oauth2/code?client_id=x');
          assert.equal(r.statusCode, 400, 'the error page of an unknown client');
          assert.equal(r.headers['ratelimit-remaining'], String(left));
        }
        for (const url of ['/oauth2/code?client_id=x', '/oauth2/authorizations']) {
          const refused = await page(url);
          assert.equal(refused.statusCode, 429, url);
          assert.match(String(refused.headers['content-type']), /^text\/html/, url);
          const retry = Number(refused.headers['retry-after']);
          assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
          assert.equal(refused.headers['ratelimit-reset'], String(retry));
          assert.equal(refused.headers['ratelimit-remaining'], '0');
          assert.equal(refused.headers['x-frame-options'], 'DENY');
          assert.match(String(refused.headers['content-security-policy']), /frame-ancestors 'none'/);
          assert.equal(refused.headers['cache-control'], 'no-store');
          assert.match(refused.body, /Too many requests/);
          assert.match(refused.body, new RegExp(`Wait ${retry} seconds`));
        }
        // An unrouted /oauth2 path is counted too, and refused in the envelope (it is no page).
        const unrouted = await t.app.inject({ method: 'GET', url: '/oauth2/nothing', remoteAddress: here });
        assertRefused({ status: unrouted.statusCode, headers: unrouted.headers, body: unrouted.json() }, 2);
        // Another address is not affected, nor is the API, nor a client authenticating from here.
        assert.equal((await page('/oauth2/code?client_id=x', randomAddress())).statusCode, 400);
        assert.equal((await call(t.app, a.token, 'GET', '/users')).status, 200);
        const introspect = await form(
          t,
          '/oauth2/introspect',
          { token: 'x', client_id: client.clientId, client_secret: client.clientSecret },
          here,
        );
        assert.equal(introspect.statusCode, 200);
        await endWindow(`auth:${here}`);
        assert.equal((await page('/oauth2/code?client_id=x')).statusCode, 400);
      } finally {
        t.config.rateLimitAuth = 60;
      }
    });
    test('RATE_LIMIT_AUTH on the client endpoints counts per client id after authentication; failed authentications per address', async () => {
      const one = await createOAuthClient(t.database);
      const two = await createOAuthClient(t.database);
      const creds = (c: { clientId: string; clientSecret: string }) => ({
        client_id: c.clientId,
        client_secret: c.clientSecret,
      });
      const [ip1, ip2, ip3, ip9] = [randomAddress(), randomAddress(), randomAddress(), randomAddress()];
      t.config.rateLimitAuth = 2;
      try {
        // One client's budget is shared by its three endpoints, whatever address it calls from.
        const first = await form(t, '/oauth2/introspect', { token: 'x', ...creds(one) }, ip1);
        assert.equal(first.statusCode, 200);
        assert.equal(first.headers['ratelimit-remaining'], '1');
        assert.equal((await form(t, '/oauth2/revoke', { token: 'x', ...creds(one) }, ip2)).statusCode, 200);
        const refused = await form(
          t,
          '/oauth2/token',
          { grant_type: 'refresh_token', refresh_token: 'x', ...creds(one) },
          ip3,
        );
        assertRefused({ status: refused.statusCode, headers: refused.headers, body: refused.json() }, 2);
        // Another client from the same addresses has its own budget; so do the pages of those addresses.
        assert.equal((await form(t, '/oauth2/introspect', { token: 'x', ...creds(two) }, ip1)).statusCode, 200);
        assert.equal(
          (await t.app.inject({ method: 'GET', url: '/oauth2/code?client_id=x', remoteAddress: ip1 })).statusCode,
          400,
        );
        // Failed client authentication (either form) counts against the address: a third is 429.
        const wrong = { token: 'x', client_id: two.clientId, client_secret: 'wrong' };
        assert.equal((await form(t, '/oauth2/revoke', wrong, ip9)).statusCode, 401);
        const basic = `Basic ${Buffer.from(`${two.clientId}:wrong`).toString('base64')}`;
        assert.equal(
          (
            await form(t, '/oauth2/token', { grant_type: 'refresh_token', refresh_token: 'x' }, ip9, {
              authorization: basic,
            })
          ).statusCode,
          401,
        );
        const spent = await form(t, '/oauth2/introspect', wrong, ip9);
        assertRefused({ status: spent.statusCode, headers: spent.headers, body: spent.json() }, 2);
        // The failures spent nothing of the client's own budget: it still has one request.
        const own = await form(t, '/oauth2/introspect', { token: 'x', ...creds(two) }, ip9);
        assert.equal(own.statusCode, 200);
        assert.equal(own.headers['ratelimit-remaining'], '0');
      } finally {
        t.config.rateLimitAuth = 60;
      }
    });

    test('0 turns a limit off: no counting, no headers', async () => {
      t.config.rateLimitApi = 0;
      t.config.rateLimitAuth = 0;
      try {
        for (let i = 0; i < 5; i++) {
          const r = await call(t.app, a.token, 'GET', '/users');
          assert.equal(r.status, 200);
          assert.equal(r.headers['ratelimit-limit'], undefined);
          assert.notEqual((await post(t, '/oauth2/token')).statusCode, 429);
        }
      } finally {
        t.config.rateLimitApi = 600;
        t.config.rateLimitAuth = 60;
      }
    });

    test(
      redisUrl
        ? 'processes on one Redis share the counters (as workers and hosts do)'
        : 'processes without Redis count on their own (each allows the limit)',
      async () => {
        const second = await buildApp({
          config: { ...t.config, rateLimitApi: 4 },
          database: t.database,
          clock: () => t.clock.now,
        });
        t.config.rateLimitApi = 4;
        try {
          const token = await a.tokenFor(a.adminId);
          const apps = [t.app, second, t.app, second];
          const remaining = [];
          for (const app of apps)
            remaining.push((await call(app, token, 'GET', '/users')).headers['ratelimit-remaining']);
          if (redisUrl) {
            assert.deepEqual(remaining, ['3', '2', '1', '0']);
            assertRefused(await call(second, token, 'GET', '/users'), 4);
            assertRefused(await call(t.app, token, 'GET', '/users'), 4);
          } else {
            assert.deepEqual(remaining, ['3', '3', '2', '2']);
            for (const app of [t.app, second]) {
              assert.equal((await call(app, token, 'GET', '/users')).headers['ratelimit-remaining'], '1');
              assert.equal((await call(app, token, 'GET', '/users')).headers['ratelimit-remaining'], '0');
              assertRefused(await call(app, token, 'GET', '/users'), 4);
            }
          }
        } finally {
          t.config.rateLimitApi = 600;
          await second.close();
        }
      },
    );
  });
}

for (const dialect of DIALECTS) rateLimitSuite(`rate limits (${dialect}, in process)`, dialect);

/** Redis is optional: the suite runs when a server answers (CI with FSM_REQUIRE_ALL=1 insists on it). */
const redisUp = await new Promise<boolean>((resolve) => {
  const u = new URL(REDIS_URL);
  const s = net.connect(Number(u.port || 6379), u.hostname);
  // A refused connection answers at once; the timeout is only for a machine too loaded to answer soon.
  s.setTimeout(10_000);
  s.on('connect', () => (s.destroy(), resolve(true)));
  s.on('error', () => resolve(false));
  s.on('timeout', () => (s.destroy(), resolve(false)));
});
if (redisUp || process.env.FSM_REQUIRE_ALL === '1') {
  rateLimitSuite('rate limits (Redis store, REDIS_URL)', 'sqlite', REDIS_URL);
  test('Redis store: one counter per bucket, every concurrent hit counted, expiring with its window', async () => {
    const { Store, close } = await openRedisStore(REDIS_URL, `fsm:test:${process.pid}:${Date.now()}:`);
    const store = new Store({});
    const hit = (bucket: string, windowMs: number) =>
      new Promise<{ current: number; ttl: number }>((resolve, reject) =>
        store.incr(bucket, (err, r) => (err ? reject(err) : resolve(r!)), windowMs, 10),
      );
    try {
      const first = await hit('k', 60_000);
      assert.equal(first.current, 1);
      assert.ok(first.ttl > 59_000 && first.ttl <= 60_000, `ttl ${first.ttl}`);
      assert.equal((await hit('k', 60_000)).current, 2);
      assert.equal((await hit('other', 60_000)).current, 1);
      const hits = await Promise.all(Array.from({ length: 20 }, () => hit('c', 60_000)));
      assert.deepEqual(
        hits.map((h) => h.current).sort((x, y) => x - y),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      // A later hit does not extend the window: the expiry is set by the first one only.
      assert.equal((await hit('short', 100)).current, 1);
      await new Promise((r) => setTimeout(r, 60));
      assert.ok((await hit('short', 100)).ttl <= 40 + 5);
      await new Promise((r) => setTimeout(r, 80));
      assert.equal((await hit('short', 100)).current, 1, 'a new window once the key expired');
    } finally {
      await close();
    }
  });
} else {
  test('rate limits (Redis store)', { skip: `no Redis at ${REDIS_URL}` }, () => {});
}
