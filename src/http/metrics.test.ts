import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import parsePrometheus, { type Family } from 'parse-prometheus-text-format';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import { connect, type Database } from '../db/index.js';
import {
  DIALECTS,
  authorizeWithInject,
  call,
  createOAuthClient,
  createTenant,
  createTestDb,
  injectBrowser,
  skipUnless,
  tokenRequest,
  type Tenant,
  type TestDb,
} from '../../test/helpers.js';
import { observeQuery, watchPool } from './metrics.js';

const METRICS_TOKEN = 'metrics-secret-0123456789';

/**
 * The parser folds a histogram's series into one sample and loses their labels; read as untyped,
 * each `_bucket`, `_sum` and `_count` line is its own sample with all its labels.
 */
const parseFlat = (text: string) => parsePrometheus(text.replace(/^# TYPE \S+ histogram$/gm, ''));

const sample = (families: Family[], name: string, labels: Record<string, string>) =>
  families
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
const value = (families: Family[], name: string, labels: Record<string, string> = {}) =>
  Number(sample(families, name, labels)?.value ?? 0);

for (const dialect of DIALECTS) {
  describe(`GET /metrics (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let db: TestDb;
    let database: Database;
    let app: FastifyInstance;
    let tenant: Tenant;
    let unwatch = () => {};

    const scrape = async () => {
      const res = await app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      assert.equal(res.statusCode, 200, res.body);
      return { text: res.body, families: parseFlat(res.body), typed: parsePrometheus(res.body), headers: res.headers };
    };

    before(async () => {
      db = await createTestDb(dialect);
      // As the server opens it: every statement observed, the pool watched.
      database = await connect({
        databaseUrl: db.config.databaseUrl,
        sqliteFile: path.join(db.dataDir, 'fsm.sqlite'),
        observe: observeQuery,
      });
      if (database.pool) unwatch = watchPool(database.pool);
      app = await buildApp({ config: { ...db.config, metricsToken: METRICS_TOKEN }, database });
      await app.ready();
      tenant = await createTenant({ ...db, app, clock: { now: Date.now() }, close: async () => {} });
    });
    after(async () => {
      unwatch();
      await app?.close();
      await database?.close();
      await db?.close();
    });

    test('off (404) without METRICS_TOKEN; 401 without the bearer secret or with a wrong one', async () => {
      const off = await buildApp({ config: db.config, database });
      try {
        const res = await off.inject({
          method: 'GET',
          url: '/metrics',
          headers: { authorization: `Bearer ${METRICS_TOKEN}` },
        });
        assert.equal(res.statusCode, 404);
      } finally {
        await off.close();
      }
      for (const authorization of [undefined, `Bearer ${METRICS_TOKEN}x`, `Bearer ${tenant.token}`, METRICS_TOKEN]) {
        const res = await app.inject({
          method: 'GET',
          url: '/metrics',
          headers: authorization ? { authorization } : {},
        });
        assert.equal(res.statusCode, 401);
        assert.equal(JSON.parse(res.body).error.code, 1011);
        assert.ok(!res.body.includes('fsm_http_requests_total'));
      }
    });

    test('requests by route template, collection and status; never a raw URL or id', async () => {
      const before = (await scrape()).families;
      const labels = { method: 'GET', route: '/:collection/:item', collection: 'users', status: '200' };
      assert.equal((await call(app, tenant.token, 'GET', `/users/${tenant.adminId}`)).status, 200);
      assert.equal((await call(app, tenant.token, 'GET', '/users/987654321')).status, 404);
      assert.equal((await call(app, tenant.token, 'GET', '/nosuchthing/55/frobnicate')).status, 404);
      assert.equal((await call(app, tenant.token, 'GET', '/jobs?where=title ~ "secret-where-value"')).status, 200);
      const { text, families, typed, headers } = await scrape();
      const delta = (name: string, l: Record<string, string>) => value(families, name, l) - value(before, name, l);
      assert.match(String(headers['content-type']), /^text\/plain; version=0\.0\.4/);
      assert.equal(delta('fsm_http_requests_total', labels), 1);
      assert.equal(delta('fsm_http_requests_total', { ...labels, status: '404' }), 1);
      assert.equal(
        delta('fsm_http_requests_total', { route: '/:collection/:item/:action', collection: 'unknown', status: '404' }),
        1,
      );
      assert.equal(
        delta('fsm_http_requests_total', { route: '/:collection', collection: 'jobs', method: 'GET', status: '200' }),
        1,
      );
      assert.equal(delta('fsm_http_request_duration_seconds_count', labels), 1);
      assert.equal(delta('fsm_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 1);
      assert.equal(typed.find((f) => f.name === 'fsm_http_request_duration_seconds')?.type, 'HISTOGRAM');
      assert.equal(typed.find((f) => f.name === 'fsm_http_requests_total')?.type, 'COUNTER');
      for (const leak of [
        `/users/${tenant.adminId}`,
        '987654321',
        'nosuchthing',
        'frobnicate',
        'secret-where-value',
        tenant.token,
        tenant.login,
      ]) {
        assert.ok(!text.includes(leak), `the scrape shows ${leak}`);
      }
    });

    test('rate-limit refusals, sign-in failures and token grants are counted', async () => {
      const before = (await scrape()).families;
      app.config.rateLimitApi = 1;
      try {
        const token = await tenant.tokenFor(tenant.adminId);
        await call(app, token, 'GET', '/users');
        assert.equal((await call(app, token, 'GET', '/users')).status, 429);
      } finally {
        app.config.rateLimitApi = 0;
      }
      const { clientId, clientSecret } = await createOAuthClient(database);
      const browser = injectBrowser(app);
      const page = await browser.request('GET', `/oauth2/code?response_type=code&scope=default&client_id=${clientId}`);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1];
      const action = /<form[^>]* action="([^"]*)"/.exec(page.body)![1].replace(/&amp;/g, '&');
      assert.equal(
        (await browser.request('POST', action, { csrf, login: tenant.login, password: 'wrong password!' })).statusCode,
        401,
      );
      const { code } = await authorizeWithInject(browser, { client_id: clientId }, tenant);
      assert.equal(
        (
          await tokenRequest(app, {
            grant_type: 'authorization_code',
            code: code!,
            client_id: clientId,
            client_secret: clientSecret,
          })
        ).status,
        200,
      );

      const after = (await scrape()).families;
      const delta = (name: string, labels: Record<string, string>) =>
        value(after, name, labels) - value(before, name, labels);
      assert.equal(delta('fsm_rate_limit_refusals_total', { limiter: 'api' }), 1);
      assert.equal(delta('fsm_sign_in_failures_total', { reason: 'invalid' }), 1);
      assert.equal(delta('fsm_oauth_token_grants_total', { grant_type: 'authorization_code' }), 1);
      assert.equal(delta('fsm_http_requests_total', { route: '/oauth2/token', method: 'POST', status: '200' }), 1);
    });

    test('database statement timings, pool gauges on PostgreSQL, and the process defaults (event-loop lag)', async () => {
      const { families } = await scrape();
      const count = value(families, 'fsm_db_query_duration_seconds_count', { dialect, outcome: 'ok' });
      assert.ok(count > 5, `statements observed: ${count}`);
      if (dialect === 'postgres') assert.ok(value(families, 'fsm_db_pool_connections', { state: 'total' }) >= 1);
      assert.ok(families.some((f) => f.name === 'nodejs_eventloop_lag_seconds'));
      assert.ok(families.some((f) => f.name === 'process_resident_memory_bytes'));
    });
  });
}
