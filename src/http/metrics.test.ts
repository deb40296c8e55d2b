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
import { startReceiver, until } from '../../test/receiver.js';
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

    test('webhook delivery attempts by outcome: succeeded, failed, gone, refused, network', async () => {
      const before = (await scrape()).families;
      const delta = (families: Family[], outcome: string) =>
        value(families, 'fsm_webhook_delivery_attempts_total', { outcome }) -
        value(before, 'fsm_webhook_delivery_attempts_total', { outcome });
      app.config.webhooksAllowPrivateUrls = true;
      // One attempt each: a failure is retried an hour later, after this test.
      app.config.webhookRetrySchedule = [3_600_000];
      const receivers = await Promise.all([200, 503, 410].map((status) => startReceiver(() => ({ status }))));
      const urls = [...receivers.map((r) => r.url), 'http://127.0.0.1:9/closed', 'https://no-such-host.invalid/hook'];
      const hooks: number[] = [];
      try {
        for (const url of urls) {
          const res = await call(app, tenant.token, 'POST', '/webhooks', {
            webhooks: [{ url, events: ['clients.created'] }],
          });
          assert.equal(res.status, 200, res.raw);
          hooks.push(res.body.webhooks[0].id);
        }
        assert.equal(
          (await call(app, tenant.token, 'POST', '/clients', { clients: [{ name: 'Metered' }] })).status,
          200,
        );
        const want = { succeeded: 1, failed: 1, gone: 1, network: 1, refused: 1 };
        let after: Family[] = before;
        await until(
          async () => {
            after = (await scrape()).families;
            return Object.keys(want).every((o) => delta(after, o) >= 1);
          },
          15_000,
          'an attempt of each outcome',
        );
        assert.deepEqual(Object.fromEntries(Object.keys(want).map((o) => [o, delta(after, o)])), want);
        assert.equal(delta(after, 'timeout') + delta(after, 'purged'), 0);
        const typed = (await scrape()).typed;
        assert.equal(typed.find((f) => f.name === 'fsm_webhook_delivery_attempts_total')?.type, 'COUNTER');
      } finally {
        app.config.webhooksAllowPrivateUrls = false;
        app.config.webhookRetrySchedule = [5000];
        for (const id of hooks) await call(app, tenant.token, 'DELETE', `/webhooks/${id}`);
        await Promise.all(receivers.map((r) => r.close()));
      }
    });

    test('waiting deliveries and the age of the oldest, measured at the scrape, in every account', async () => {
      const kdb = database.db;
      const now = app.clock();
      const hook = async (tenantOf: Tenant, active: boolean) => {
        const res = await call(app, tenantOf.token, 'POST', '/webhooks', {
          webhooks: [{ url: 'https://hooks.example.com/metered', events: ['clients.created'], active }],
        });
        assert.equal(res.status, 200, res.raw);
        return { id: res.body.webhooks[0].id as number, accountId: tenantOf.accountId };
      };
      const other = await createTenant({ ...db, app, clock: { now }, close: async () => {} }, 'Other');
      const receiving = [await hook(tenant, true), await hook(other, true)];
      const paused = await hook(tenant, false);
      // Queued, not yet due (so no worker sends them meanwhile), created as many seconds ago.
      const queue = async (w: { id: number; accountId: number }, ageSeconds: number, type = 'clients.created') =>
        kdb
          .insertInto('deliveries')
          .values({
            account_id: w.accountId,
            webhook_id: w.id,
            event_id: null,
            type,
            msg_id: `msg_${ageSeconds}_${w.id}_${type}`,
            state: 'pending',
            attempts: 0,
            next_attempt_at: now + 3_600_000,
            created: now - ageSeconds * 1000,
            modified: now,
          })
          .execute();
      try {
        const { families: empty } = await scrape();
        assert.equal(value(empty, 'fsm_webhook_deliveries_waiting'), 0);
        assert.equal(value(empty, 'fsm_webhook_delivery_oldest_waiting_seconds'), 0);
        await queue(receiving[0], 30);
        await queue(receiving[1], 95);
        await queue(receiving[1], 5);
        // A paused webhook's deliveries wait on purpose: not counted, however old; its ping is.
        await queue(paused, 5000);
        await queue(paused, 12, 'webhook.ping');
        // Retried ones (attempted already) and finished ones are not waiting.
        await queue(receiving[0], 4000);
        await kdb
          .updateTable('deliveries')
          .set({ attempts: 1 })
          .where('msg_id', '=', `msg_4000_${receiving[0].id}_clients.created`)
          .execute();
        const { families, typed } = await scrape();
        assert.equal(value(families, 'fsm_webhook_deliveries_waiting'), 4);
        const age = value(families, 'fsm_webhook_delivery_oldest_waiting_seconds');
        assert.ok(age >= 95 && age < 95 + 60, `oldest: ${age}`);
        assert.equal(typed.find((f) => f.name === 'fsm_webhook_deliveries_waiting')?.type, 'GAUGE');
      } finally {
        for (const w of [...receiving, paused]) await kdb.deleteFrom('webhooks').where('id', '=', w.id).execute();
      }
      const { families: cleared } = await scrape();
      assert.equal(value(cleared, 'fsm_webhook_deliveries_waiting'), 0);
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
