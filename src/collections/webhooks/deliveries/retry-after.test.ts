import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, suiteWithTenants, call, skipUnless } from '../../../../test/helpers.js';
import { startReceiver, until } from '../../../../test/receiver.js';
import { retryAfter } from './send.js';
import { startDeliveryWorker } from './worker.js';

const LAST = '9999-12-31T23:59:59.999Z';
const FIRST = '0000-01-01T00:00:00.000Z';

describe("a receiver's Retry-After, read", () => {
  it('seconds or an HTTP-date, as finite non-negative milliseconds; anything else is no Retry-After', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfter('120', now), 120_000);
    assert.equal(retryAfter(' 5 ', now), 5000);
    assert.equal(retryAfter(['7', '9'], now), 7000);
    assert.equal(retryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000);
    assert.equal(retryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now), 0, 'a date past is now');
    for (const huge of ['99999999999999999999', '9000000000000', '9'.repeat(400), 'Fri, 31 Dec 9999 23:59:59 GMT']) {
      const ms = retryAfter(huge, now)!;
      assert.ok(Number.isSafeInteger(ms) && ms > 0, `${huge.slice(0, 30)}: ${ms}`);
    }
    for (const none of [undefined, '', '   ', 'soon', '-5'])
      assert.equal(retryAfter(none, now), undefined, String(none));
  });
});

for (const dialect of DIALECTS) {
  describe(`webhook Retry-After and out-of-range times (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect, { deliveries: false });
    before(async () => {
      t.config.webhooksAllowPrivateUrls = true;
      // The first retry after 1 s; the longest step, and so the cap of any Retry-After, 60 s.
      t.config.webhookRetrySchedule = [1000, 60_000];
    });

    const deliveries = async () => {
      const res = await call(t.app, a.token, 'GET', '/deliveries?fields=*&sort=id');
      assert.equal(res.status, 200, res.raw);
      return res.body.deliveries as { id: number; nextAttemptAt: string; state: string; lastStatus: number }[];
    };

    it('is honoured up to the longest step of the schedule: a huge number or a far date neither fails nor parks it', async () => {
      const asked: Record<string, string> = {
        huge: '99999999999999999999',
        big: '9000000000000',
        far: 'Fri, 31 Dec 9999 23:59:59 GMT',
        longer: '30',
        shorter: '0',
      };
      const rx = await startReceiver((r) => ({
        status: 503,
        headers: { 'retry-after': asked[/"name":"(\w+)"/.exec(r.body)![1]] },
      }));
      const hook = await call(t.app, a.token, 'POST', '/webhooks', {
        webhooks: [{ url: rx.url, events: ['clients.created'] }],
      });
      assert.equal(hook.status, 200, hook.raw);
      const made = await call(t.app, a.token, 'POST', '/clients', {
        clients: Object.keys(asked).map((name) => ({ name })),
      });
      assert.equal(made.status, 200, made.raw);
      const worker = startDeliveryWorker(t.services, () => t.clock.now);
      const db = t.database.db;
      const left = async () =>
        (
          await db
            .selectFrom('deliveries')
            .select('id')
            .where('webhook_id', '=', hook.body.webhooks[0].id)
            .where((eb) => eb.or([eb('lease_owner', 'is not', null), eb('attempts', '=', 0)]))
            .execute()
        ).length;
      try {
        await until(() => rx.received.length >= 5, 20_000, 'five attempts');
        await until(async () => (await left()) === 0, 10_000, 'every outcome recorded');
      } finally {
        await worker.stop();
      }
      const rows = await db
        .selectFrom('deliveries')
        .innerJoin('events', 'events.id', 'deliveries.event_id')
        .select(['events.data', 'deliveries.state', 'deliveries.attempts', 'deliveries.next_attempt_at'])
        .where('deliveries.webhook_id', '=', hook.body.webhooks[0].id)
        .execute();
      const waits = Object.fromEntries(
        rows.map((r) => {
          assert.deepEqual([r.state, r.attempts], ['pending', 1], r.data);
          return [JSON.parse(r.data).name, Number(r.next_attempt_at) - t.clock.now];
        }),
      );
      assert.deepEqual(waits, { huge: 60_000, big: 60_000, far: 60_000, longer: 30_000, shorter: 1000 });
      // Read back through the API: no 500.
      const shown = (await deliveries()).filter((d) => d.lastStatus === 503);
      assert.equal(shown.length, 5);
      for (const d of shown) assert.ok(Date.parse(d.nextAttemptAt) <= t.clock.now + 60_000, d.nextAttemptAt);
      // Sent again when due, not parked: a minute later every one of them is attempted once more.
      t.clock.now += 60_000;
      const again = startDeliveryWorker(t.services, () => t.clock.now);
      try {
        await until(() => rx.received.length >= 10, 20_000, 'the second attempts');
      } finally {
        await again.stop();
      }
      await db.deleteFrom('webhooks').where('id', '=', hook.body.webhooks[0].id).execute();
      await rx.close();
    });

    it('any time a row holds, however far out, is read (clamped to years 0-9999) and the row can be retried', async () => {
      const hook = await call(t.app, a.token, 'POST', '/webhooks', {
        webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['jobs.created'] }],
      });
      assert.equal(hook.status, 200, hook.raw);
      const ping = async () =>
        (await call(t.app, a.token, 'POST', `/webhooks/${hook.body.webhooks[0].id}/ping`)).body.deliveries[0]
          .id as number;
      const far = await ping();
      const early = await ping();
      const db = t.database.db;
      // The extremes each database can hold in its bigint columns (SQLite: also a float past them).
      const max = dialect === 'postgres' ? sql`9223372036854775807` : sql`1e23`;
      const min = sql`-9223372036854775808`;
      await sql`update deliveries set next_attempt_at = ${max}, modified = ${max} where id = ${far}`.execute(db);
      await sql`update deliveries set next_attempt_at = ${min}, created = ${min} where id = ${early}`.execute(db);
      const byId = new Map((await deliveries()).map((d) => [d.id, d as Record<string, unknown>]));
      assert.deepEqual([byId.get(far)!.nextAttemptAt, byId.get(far)!.modified], [LAST, LAST]);
      assert.deepEqual([byId.get(early)!.nextAttemptAt, byId.get(early)!.created], [FIRST, FIRST]);
      const one = await call(t.app, a.token, 'GET', `/deliveries/${far}?fields=*`);
      assert.equal(one.status, 200, one.raw);
      assert.equal(one.body.deliveries[0].nextAttemptAt, LAST);
      const sorted = await call(
        t.app,
        a.token,
        'GET',
        `/deliveries?sort=nextAttemptAt&where=${encodeURIComponent('type="webhook.ping"')}`,
      );
      assert.equal(sorted.status, 200, sorted.raw);
      // Retried: due now, attempted, and its outcome recorded over the stored value.
      const retried = await call(t.app, a.token, 'POST', `/deliveries/${far}/retry`);
      assert.equal(retried.status, 200, retried.raw);
      assert.equal(retried.body.deliveries[0].nextAttemptAt, new Date(t.clock.now).toISOString());
      await db.deleteFrom('deliveries').where('id', '=', early).execute();
      const worker = startDeliveryWorker(t.services, () => t.clock.now);
      try {
        await until(
          async () =>
            (await db.selectFrom('deliveries').select('attempts').where('id', '=', far).executeTakeFirstOrThrow())
              .attempts === 1 &&
            (await db.selectFrom('deliveries').select('lease_owner').where('id', '=', far).executeTakeFirstOrThrow())
              .lease_owner === null,
          10_000,
          'the attempt recorded',
        );
      } finally {
        await worker.stop();
      }
      const row = await db
        .selectFrom('deliveries')
        .select(['state', 'last_error', 'next_attempt_at'])
        .where('id', '=', far)
        .executeTakeFirstOrThrow();
      assert.equal(row.state, 'pending');
      assert.match(row.last_error ?? '', /network/);
      assert.equal(Number(row.next_attempt_at), t.clock.now + 1000);
    });
  });
}
