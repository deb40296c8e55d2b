import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, appWithTenants, call, skipUnless, type Tenant, type TestApp } from '../../../test/helpers.js';

/**
 * A webhook's secret is shown once, in the create answer, and stored where signing needs it and
 * nowhere else: an idempotent create keeps its answer without the secret, and a replay has none.
 */
for (const dialect of DIALECTS) {
  describe(`webhook secrets and kept answers (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      ({ t, a } = await appWithTenants(dialect));
    });
    after(() => t?.close());

    it('the first answer carries the secret; the kept answer and its replay do not', async () => {
      const body = { webhooks: [{ url: 'https://hooks.example.com/fsm', events: ['jobs.*'] }] };
      const first = await call(t.app, a.token, 'POST', '/webhooks', body, { 'idempotency-key': 'hook-1' });
      assert.equal(first.status, 200, first.raw);
      const secret = first.body.webhooks[0].secret as string;
      assert.match(secret, /^whsec_/);

      const kept = await t.database.db
        .selectFrom('idempotency_keys')
        .select(['body', 'state'])
        .where('key', '=', 'hook-1')
        .executeTakeFirstOrThrow();
      assert.ok(kept.body, 'the answer was kept');
      assert.ok(!kept.body.includes(secret.slice(6)), 'the kept answer holds the secret');

      const again = await call(t.app, a.token, 'POST', '/webhooks', body, { 'idempotency-key': 'hook-1' });
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.body.webhooks[0].id, first.body.webhooks[0].id);
      assert.equal(again.body.webhooks[0].secret, undefined);
      assert.ok(!again.raw.includes(secret.slice(6)));
    });
  });
}
