import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, suiteWithTenants, call, skipUnless } from '../../../test/helpers.js';

/**
 * A webhook's secret is shown once, in the create answer, and stored where signing needs it and
 * nowhere else: an idempotent create keeps its answer without the secret, and a replay has none.
 */
for (const dialect of DIALECTS) {
  describe(`webhook secrets and kept answers (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

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
      assert.ok(!kept.body.includes('whsec_'));

      const again = await call(t.app, a.token, 'POST', '/webhooks', body, { 'idempotency-key': 'hook-1' });
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.body.webhooks[0].id, first.body.webhooks[0].id);
      assert.equal(again.body.webhooks[0].secret, undefined);
      assert.ok(!again.raw.includes(secret.slice(6)));
    });

    it('rotateSecret: the first answer shows the new secret; the kept answer and its replay do not (issue 25)', async () => {
      const made = await call(t.app, a.token, 'POST', '/webhooks', {
        webhooks: [{ url: 'https://hooks.example.com/rotated', events: ['jobs.*'] }],
      });
      assert.equal(made.status, 200, made.raw);
      const id = made.body.webhooks[0].id as number;
      const rotate = () =>
        call(t.app, a.token, 'POST', `/webhooks/${id}/rotateSecret`, undefined, { 'idempotency-key': 'rotate-1' });
      const first = await rotate();
      assert.equal(first.status, 200, first.raw);
      assert.equal(first.headers['idempotency-replayed'], undefined);
      const secret = first.body.webhooks[0].secret as string;
      assert.match(secret, /^whsec_/);
      assert.notEqual(secret, made.body.webhooks[0].secret);

      const kept = await t.database.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('key', '=', 'rotate-1')
        .executeTakeFirstOrThrow();
      assert.equal(kept.state, 'done');
      assert.ok(kept.body, 'the answer was kept');
      const stored = JSON.stringify(kept);
      assert.ok(!stored.includes('whsec_'), 'the kept row holds a secret');
      assert.ok(!stored.includes(secret.slice(6)));
      assert.equal(JSON.parse(kept.body).webhooks[0].id, id);

      const again = await rotate();
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.equal(again.body.webhooks[0].id, id);
      assert.equal(again.body.webhooks[0].secret, undefined);
      assert.ok(!again.raw.includes('whsec_'));
      // Rotated once: the replay made no new secret, the one shown first is the one that signs.
      const row = await t.database.db
        .selectFrom('webhooks')
        .select(['secret', 'previous_secret'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { secret, previous_secret: made.body.webhooks[0].secret });
      // Without a key, nothing is kept, and the secret is shown as before.
      const plain = await call(t.app, a.token, 'POST', `/webhooks/${id}/rotateSecret`);
      assert.match(plain.body.webhooks[0].secret, /^whsec_/);
    });
  });
}
