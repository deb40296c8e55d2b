import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { buildApp } from '../app.js';
import { openDatabase } from '../db/index.js';
import { DIALECTS, PG_URL, createTestApp, skipUnless, type TestApp } from '../../test/helpers.js';

async function pgAdmin(query: string) {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(query);
  } finally {
    await c.end();
  }
}

for (const dialect of DIALECTS) {
  describe(`health and readiness (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t?.close());

    test('healthz and readyz answer 200 without a token or X-Version, with the standard headers', async () => {
      for (const url of ['/healthz', '/readyz']) {
        const res = await t.app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
        assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(JSON.parse(res.body).status, url === '/healthz' ? 'ok' : 'ready');
      }
    });

    test('not rate-limited: far more probes than the limits allow all answer 200', async () => {
      const config = t.app.config;
      const saved = { api: config.rateLimitApi, auth: config.rateLimitAuth };
      config.rateLimitApi = 1;
      config.rateLimitAuth = 1;
      try {
        const statuses = await Promise.all(
          Array.from({ length: 10 }, (_, i) => t.app.inject({ method: 'GET', url: i % 2 ? '/readyz' : '/healthz' })),
        );
        assert.deepEqual(
          statuses.map((r) => r.statusCode),
          Array(10).fill(200),
        );
      } finally {
        config.rateLimitApi = saved.api;
        config.rateLimitAuth = saved.auth;
      }
    });

    test('a migration not applied: readyz 503 naming it, healthz still 200; ready again once it is back', async () => {
      const db = t.database.db;
      await sql`update kysely_migration set name = 'x_006' where name = '006_count_versions'`.execute(db);
      try {
        const res = await t.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(res.statusCode, 503);
        assert.equal(res.headers['retry-after'], '1');
        assert.deepEqual(JSON.parse(res.body), {
          status: 'unavailable',
          reason: 'migrations not applied: 006_count_versions',
        });
        assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      } finally {
        await sql`update kysely_migration set name = '006_count_versions' where name = 'x_006'`.execute(db);
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    });

    test('while the server shuts down, readyz answers 503', async () => {
      const other = await buildApp({ config: t.config, database: t.database });
      // Runs after the app's own preClose hook, which marks the shutdown.
      let during: Response | undefined;
      let origin = '';
      other.addHook('preClose', async () => {
        during = await fetch(`${origin}/readyz`);
      });
      await other.listen({ host: '127.0.0.1', port: 0 });
      origin = `http://127.0.0.1:${(other.server.address() as { port: number }).port}`;
      assert.equal((await fetch(`${origin}/readyz`)).status, 200);
      await other.close();
      assert.ok(during);
      assert.equal(during.status, 503);
      assert.equal(during.headers.get('connection'), 'close');
    });
  });
}

describe('readiness during a PostgreSQL outage', { skip: skipUnless('postgres') }, () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp('postgres');
  });
  after(async () => {
    await pgAdmin(`alter database ${new URL(t.config.databaseUrl!).pathname.slice(1)} allow_connections true`).catch(
      () => {},
    );
    await t?.close();
  });

  test(
    'the database refuses connections: 503 within the timeout; back to 200 by itself',
    { timeout: 30_000 },
    async () => {
      const name = new URL(t.config.databaseUrl!).pathname.slice(1);
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      await pgAdmin(`alter database ${name} allow_connections false`);
      await pgAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const res = await t.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(res.statusCode, 503, res.body);
        assert.ok(Date.now() - started < 1500, 'answered within the timeout');
        assert.equal(JSON.parse(res.body).reason, 'the database is unavailable');
        // Liveness does not depend on the database: the process is fine.
        assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      }
      await pgAdmin(`alter database ${name} allow_connections true`);
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 200, 'ready again once the database is back');
    },
  );

  test(
    'a database that does not answer (a lock held elsewhere): 503 after about a second',
    { timeout: 30_000 },
    async () => {
      const locker = new pg.Client({ connectionString: t.config.databaseUrl });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query('lock table kysely_migration in access exclusive mode');
        const started = Date.now();
        const res = await t.app.inject({ method: 'GET', url: '/readyz' });
        const took = Date.now() - started;
        assert.equal(res.statusCode, 503);
        assert.equal(JSON.parse(res.body).reason, 'the database did not answer within 1 s');
        assert.ok(took >= 900 && took < 3000, `took ${took} ms`);
        // More probes while it hangs: each answers 503 in time, and they all wait on one query.
        const more = await Promise.all([1, 2, 3].map(() => t.app.inject({ method: 'GET', url: '/readyz' })));
        assert.deepEqual(
          more.map((r) => r.statusCode),
          [503, 503, 503],
        );
        const waiting = await locker.query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and query like 'select name from kysely_migration%' and state = 'active'`,
        );
        assert.equal(waiting.rows[0].n, 1, 'one readiness query, not one per probe');
      } finally {
        await locker.query('rollback');
        await locker.end();
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    },
  );

  test('a pool that cannot connect at all (nothing listening): 503', async () => {
    const url = new URL(PG_URL!);
    url.port = '1';
    const database = openDatabase({ databaseUrl: url.toString(), poolSize: 1 });
    const app = await buildApp({ config: t.config, database });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await app.close();
      await database.close();
    }
  });
});
