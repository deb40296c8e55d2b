import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import {
  DIALECTS,
  call,
  createTenant,
  createTestDb,
  skipUnless,
  type Tenant,
  type TestDb,
} from '../../test/helpers.js';
import { loggerOptions } from './logging.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const dialect of DIALECTS) {
  describe(`request ids and logs (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let db: TestDb;
    let app: FastifyInstance;
    let tenant: Tenant;
    const lines: Record<string, any>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
        done();
      },
    });
    const linesOf = (id: string) => lines.filter((l) => l.requestId === id);

    before(async () => {
      db = await createTestDb(dialect);
      // The server's own logger options, writing to memory.
      app = await buildApp({ config: db.config, database: db.database, logger: loggerOptions('info', sink) });
      await app.ready();
      tenant = await createTenant({ ...db, app, clock: { now: Date.now() }, close: async () => {} });
    });
    after(async () => {
      await app?.close();
      await db?.close();
    });

    test('a sane X-Request-Id is echoed and tags every log line of the request', async () => {
      const res = await call(app, tenant.token, 'GET', '/users', undefined, { 'x-request-id': 'lb-7f3a:42.x_y' });
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-request-id'], 'lb-7f3a:42.x_y');
      const mine = linesOf('lb-7f3a:42.x_y');
      assert.deepEqual(
        mine.map((l) => l.msg),
        ['incoming request', 'request completed'],
      );
      assert.equal(mine[1].res.statusCode, 200);
    });

    test('a missing, empty, too long or odd X-Request-Id is replaced by a fresh UUID', async () => {
      const seen = new Set<string>();
      for (const given of [undefined, '', 'a'.repeat(129), 'has space', 'semi;colon', 'é']) {
        const res = await app.inject({
          method: 'GET',
          url: '/healthz',
          headers: given === undefined ? {} : { 'x-request-id': given },
        });
        const id = String(res.headers['x-request-id']);
        assert.match(id, UUID, `given ${given}`);
        seen.add(id);
      }
      assert.equal(seen.size, 6);
      assert.equal(
        String(
          (await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a'.repeat(128) } })).headers[
            'x-request-id'
          ],
        ),
        'a'.repeat(128),
      );
    });

    test('every answer carries it: errors, 404s, pages, the token endpoint', async () => {
      for (const [method, url] of [
        ['GET', '/users'],
        ['GET', '/nowhere/at/all/x'],
        ['GET', '/oauth2/code'],
        ['POST', '/oauth2/token'],
      ] as const) {
        const res = await app.inject({ method, url, headers: { 'x-request-id': `r-${method}` } });
        assert.equal(res.headers['x-request-id'], `r-${method}`, `${method} ${url}`);
      }
    });

    test('a 500 keeps its generic message; the log line of that request has the detail', async () => {
      await sql`alter table workgroups rename to workgroups_gone`.execute(db.database.db);
      try {
        const res = await call(app, tenant.token, 'GET', '/workgroups', undefined, { 'x-request-id': 'broken-1' });
        assert.equal(res.status, 500);
        assert.deepEqual(res.body.error, { type: 'server', code: 1500, message: 'Internal server error' });
        const failed = linesOf('broken-1').find((l) => l.level === 50);
        assert.ok(failed, 'an error line tagged with the request id');
        assert.match(JSON.stringify(failed.err), /workgroups/);
      } finally {
        await sql`alter table workgroups_gone rename to workgroups`.execute(db.database.db);
      }
    });

    test('no token, password, code or where value at info level; probes are not logged at info', async () => {
      const before = lines.length;
      await call(app, tenant.token, 'GET', '/jobs?where=title ~ "where-secret-value"', undefined, {
        'x-request-id': 'quiet-1',
      });
      await app.inject({
        method: 'POST',
        url: '/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=authorization_code&code=code-secret-value&client_id=x&client_secret=client-secret-value',
      });
      await app.inject({ method: 'GET', url: '/oauth2/code?code=query-secret-value&client_id=x' });
      await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'probe-1' } });
      await app.inject({ method: 'GET', url: '/readyz', headers: { 'x-request-id': 'probe-2' } });
      const text = JSON.stringify(lines.slice(before));
      for (const secret of [
        tenant.token,
        'where-secret-value',
        'code-secret-value',
        'client-secret-value',
        'query-secret-value',
        tenant.password,
      ]) {
        assert.ok(!text.includes(secret), `the log shows ${secret}`);
      }
      assert.equal(linesOf('quiet-1')[0].req.url, '/jobs');
      assert.deepEqual(linesOf('probe-1'), []);
      assert.deepEqual(linesOf('probe-2'), []);
    });
  });
}
