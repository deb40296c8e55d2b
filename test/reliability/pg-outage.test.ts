import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, skipUnless } from '../helpers.js';
import { createSite, pgAdmin, request, sleep, startServer } from './process.js';

/**
 * The database goes away while the server runs: its connections are terminated and new ones are
 * refused, for this one test database only (the cluster stays up for everyone else). Requests
 * must fail cleanly (503 in the envelope, error 1503, Retry-After), the process must live on, and
 * it must recover by itself once the database is back.
 */
function assertUnavailable(res: { status: number; body: any; headers: Headers | undefined }, what: string) {
  assert.equal(res.status, 503, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body.result, 'error');
  assert.equal(res.body.error.code, 1503);
  assert.equal(res.body.error.type, 'server');
  assert.ok(
    !/select|insert|postgres|connection|\//i.test(res.body.error.message),
    `internals leaked: ${res.body.error.message}`,
  );
  assert.equal(res.headers!.get('retry-after'), '1');
  assert.equal(res.headers!.get('content-type'), 'application/json;charset=UTF-8');
  assert.equal(res.headers!.get('cache-control'), 'no-store');
  assert.equal(res.headers!.get('pragma'), 'no-cache');
  assert.equal(res.headers!.get('x-version'), '1.0');
}

describe('PostgreSQL outage while the server runs', { skip: skipUnless('postgres') }, () => {
  test(
    'connections terminated and refused: 503 in the envelope; back by itself afterwards',
    { timeout: 60_000 },
    async (t) => {
      const site = await createSite('postgres', { RATE_LIMIT_API: '600' });
      const server = await startServer(site.env);
      const name = site.pgName!;
      const user = (n: string) => ({
        users: [{ account: { id: site.accountId }, firstName: 'Outage', lastName: n, mobile: '+447700900123' }],
      });
      try {
        assert.equal((await request(server.origin, site.token, 'GET', '/users')).status, 200);

        // 1. Every connection killed, the database still open: the next requests may meet a dead
        //    pooled connection (503) but never a 500, and the pool heals within a few requests.
        await pgAdmin(
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`,
        );
        const healing: number[] = [];
        for (let i = 0; i < 15; i++) healing.push((await request(server.origin, site.token, 'GET', '/users')).status);
        assert.ok(
          healing.every((s) => s === 200 || s === 503),
          `statuses after the kill: ${healing}`,
        );
        assert.equal(healing.at(-1), 200, `not healed: ${healing}`);

        // 2. The database refuses connections (as during a restart) and every open one is killed.
        await pgAdmin(`alter database ${name} allow_connections false`);
        await pgAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);
        const during = [];
        for (let i = 0; i < 6; i++) {
          const read = await request(server.origin, site.token, 'GET', '/users');
          assertUnavailable(read, 'GET during the outage');
          const write = await request(server.origin, site.token, 'POST', '/users', user(`during-${i}`));
          assertUnavailable(write, 'POST during the outage');
          during.push(read.status, write.status);
        }
        // Concurrent requests too (several pool slots failing to connect at once).
        const burst = await Promise.all(
          Array.from({ length: 20 }, () => request(server.origin, site.token, 'GET', '/jobs')),
        );
        for (const r of burst) assertUnavailable(r, 'concurrent GET during the outage');
        assert.equal(server.child.exitCode, null, 'the server must survive the outage');
        // Readiness says so (load balancers stop sending traffic); liveness does not (no restart).
        const ready = await fetch(`${server.origin}/readyz`);
        assert.equal(ready.status, 503);
        assert.equal(((await ready.json()) as { reason: string }).reason, 'the database is unavailable');
        assert.equal((await fetch(`${server.origin}/healthz`)).status, 200);

        // 3. The database is back: the server recovers without a restart.
        await pgAdmin(`alter database ${name} allow_connections true`);
        let recovered = 0;
        const started = Date.now();
        while (Date.now() - started < 10_000) {
          const r = await request(server.origin, site.token, 'GET', '/users');
          if (r.status === 200) {
            recovered = Date.now() - started;
            break;
          }
          assertUnavailable(r, 'GET while recovering');
          await sleep(100);
        }
        assert.ok(
          recovered >= 0 && (await request(server.origin, site.token, 'GET', '/users')).status === 200,
          'did not recover',
        );
        assert.equal((await fetch(`${server.origin}/readyz`)).status, 200, 'ready again');
        const write = await request(server.origin, site.token, 'POST', '/users', user('after'));
        assert.equal(write.status, 200, JSON.stringify(write.body));
        // Nothing refused during the outage was stored.

        const stored = await (site.db.database.db as any)
          .selectFrom('users')
          .select('last_name')
          .where('last_name', 'like', 'during-%')
          .execute();
        assert.deepEqual(stored, []);
        t.diagnostic(
          `after kill: ${healing.join(',')}; outage: ${during.length + burst.length} requests, all 503; recovered ${recovered} ms after the database reopened`,
        );
      } finally {
        await pgAdmin(`alter database ${name} allow_connections true`).catch(() => {});
        server.child.kill('SIGTERM');
        await server.exited;
        await site.close();
      }
    },
  );

  test(
    'the authorization server during the outage: a JSON 503 on the token endpoints, an HTML 503 page on the pages',
    { timeout: 60_000 },
    async () => {
      const site = await createSite('postgres');
      const server = await startServer(site.env);
      const name = site.pgName!;
      const { clientId, clientSecret } = await createClient(site.db.database);
      const form = (path: string, fields: Record<string, string>) =>
        fetch(`${server.origin}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields).toString(),
          signal: AbortSignal.timeout(15_000),
        });
      const token = () =>
        form('/oauth2/token', {
          grant_type: 'authorization_code',
          code: 'no-such-code',
          client_id: clientId,
          client_secret: clientSecret,
        });
      const codePage = () =>
        fetch(
          `${server.origin}/oauth2/code?${new URLSearchParams({ response_type: 'code', client_id: clientId, scope: 'default' })}`,
          { signal: AbortSignal.timeout(15_000) },
        );
      try {
        // Up: the usual answers (a bad code is the client's problem; the page is the login form).
        assert.equal((await token()).status, 400);
        assert.equal((await codePage()).status, 200);

        await pgAdmin(`alter database ${name} allow_connections false`);
        await pgAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);
        for (let i = 0; i < 3; i++) {
          for (const [what, res] of [
            ['token', await token()],
            ['revoke', await form('/oauth2/revoke', { token: 'x', client_id: clientId, client_secret: clientSecret })],
            [
              'introspect',
              await form('/oauth2/introspect', { token: 'x', client_id: clientId, client_secret: clientSecret }),
            ],
          ] as const) {
            const body = (await res.json()) as { error: string; error_description: string };
            assert.equal(res.status, 503, `${what}: ${res.status} ${JSON.stringify(body)}`);
            assert.equal(body.error, 'temporarily_unavailable');
            assert.doesNotMatch(body.error_description, /select|postgres|connection|\//i);
            assert.equal(res.headers.get('retry-after'), '1');
            assert.equal(res.headers.get('content-type'), 'application/json;charset=UTF-8');
            assert.equal(res.headers.get('cache-control'), 'no-store');
          }
          const page = await codePage();
          const html = await page.text();
          assert.equal(page.status, 503, html);
          assert.equal(page.headers.get('retry-after'), '1');
          assert.match(page.headers.get('content-type')!, /^text\/html/);
          assert.match(html, /Temporarily unavailable/);
          assert.doesNotMatch(html, /select|postgres|ECONN/i);
        }
        assert.equal(server.child.exitCode, null, 'the server must survive the outage');

        await pgAdmin(`alter database ${name} allow_connections true`);
        let back = 0;
        for (let i = 0; i < 100 && back !== 400; i++) {
          back = (await token()).status;
          if (back !== 400) await sleep(100);
        }
        assert.equal(back, 400, 'the token endpoint answers as before once the database is back');
        assert.equal((await codePage()).status, 200);
      } finally {
        await pgAdmin(`alter database ${name} allow_connections true`).catch(() => {});
        server.child.kill('SIGTERM');
        await server.exited;
        await site.close();
      }
    },
  );
});
