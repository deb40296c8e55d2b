import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, suiteWithTenants, call, skipUnless } from '../../../../test/helpers.js';
import { startReceiver, until } from '../../../../test/receiver.js';
import { purgeEvents } from '../../events/index.js';
import { ConfigError, loadConfig, parseSchedule } from '../../../config.js';
import { fanOut } from './fanout.js';
import { startDeliveryWorker } from './worker.js';

describe('webhook settings', () => {
  it('parses WEBHOOK_RETRY_SCHEDULE, WEBHOOKS_ALLOW_PRIVATE_URLS and EVENTS_RETENTION_DAYS', () => {
    assert.deepEqual(parseSchedule('5s,5m,30m,2h,1d,250ms'), [5000, 300_000, 1_800_000, 7_200_000, 86_400_000, 250]);
    for (const bad of ['', '5', '5x', '-1s', '5s,,5m']) assert.throws(() => parseSchedule(bad), ConfigError, bad);
    const d = loadConfig({} as NodeJS.ProcessEnv);
    assert.deepEqual(
      [d.webhookRetrySchedule.length, d.webhookRetrySchedule[0], d.webhooksAllowPrivateUrls, d.eventsRetentionDays],
      [7, 5000, false, 30],
    );
    const c = loadConfig({
      WEBHOOK_RETRY_SCHEDULE: '1s',
      WEBHOOKS_ALLOW_PRIVATE_URLS: '1',
      EVENTS_RETENTION_DAYS: '7',
    } as NodeJS.ProcessEnv);
    assert.deepEqual([c.webhookRetrySchedule, c.webhooksAllowPrivateUrls, c.eventsRetentionDays], [[1000], true, 7]);
    assert.throws(() => loadConfig({ EVENTS_RETENTION_DAYS: '0' } as NodeJS.ProcessEnv), ConfigError);
  });
});

for (const dialect of DIALECTS) {
  describe(`delivery worker (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect, { deliveries: false });
    before(async () => {
      // No worker in the app: the test runs its own, two of them, as two processes would.
      t.config.webhooksAllowPrivateUrls = true;
    });
    /** The events queued for a webhook, in event order, with their data. */
    const queuedFor = async (webhookId: number) =>
      (
        await t.database.db
          .selectFrom('deliveries')
          .innerJoin('events', 'events.id', 'deliveries.event_id')
          .select(['events.type', 'events.data'])
          .where('deliveries.webhook_id', '=', webhookId)
          .orderBy('events.id')
          .execute()
      ).map((d) => ({ type: d.type, data: JSON.parse(d.data) }));

    it('sends each attempt once when two workers share the queue', async () => {
      const rx = await startReceiver(() => ({ status: 200, delayMs: 5 }));
      const hook = await call(t.app, a.token, 'POST', '/webhooks', {
        webhooks: [{ url: rx.url, events: ['clients.*'] }],
      });
      assert.equal(hook.status, 200, hook.raw);
      const N = 60;
      for (let i = 0; i < N / 3; i++)
        await call(t.app, a.token, 'POST', '/clients', {
          clients: [{ name: `a${i}` }, { name: `b${i}` }, { name: `c${i}` }],
        });
      const clock = () => t.clock.now;
      const workers = [startDeliveryWorker(t.services, clock), startDeliveryWorker(t.services, clock)];
      try {
        await until(() => rx.received.length >= N, 20_000, 'every delivery');
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
      const ids = rx.received.map((r) => r.headers['webhook-id']);
      assert.equal(ids.length, N);
      assert.equal(new Set(ids).size, N, 'no attempt sent twice');
      const pending = await t.database.db
        .selectFrom('deliveries')
        .select('id')
        .where('state', '!=', 'succeeded')
        .execute();
      assert.deepEqual(pending, []);
      await rx.close();
    });

    it('records each outcome of a batch: successes at once, failures each with its status and next attempt', async () => {
      // Odd-numbered clients are refused: one webhook's batch mixes 200s and 503s.
      const rx = await startReceiver((r) => ({ status: /"name":"odd/.test(r.body) ? 503 : 201 }));
      // Only this test's webhook receives these events: the others are paused (the change is an
      // event, which the worker reads in order with the rest).
      for (const w of await t.database.db.selectFrom('webhooks').select('id').execute()) {
        assert.equal(
          (await call(t.app, a.token, 'PATCH', `/webhooks/${w.id}`, { webhooks: [{ active: false }] })).status,
          200,
        );
      }
      const hook = (
        await call(t.app, a.token, 'POST', '/webhooks', { webhooks: [{ url: rx.url, events: ['clients.created'] }] })
      ).body.webhooks[0];
      const made = await call(t.app, a.token, 'POST', '/clients', {
        clients: [0, 1, 2, 3, 4, 5].map((i) => ({ name: `${i % 2 ? 'odd' : 'even'}-${i}` })),
      });
      assert.equal(made.status, 200);
      const worker = startDeliveryWorker(t.services, () => t.clock.now);
      try {
        await until(() => rx.received.length >= 6, 20_000, 'six deliveries');
        await until(
          async () =>
            (
              await t.database.db
                .selectFrom('deliveries')
                .select('id')
                .where('webhook_id', '=', hook.id)
                .where('lease_owner', 'is not', null)
                .execute()
            ).length === 0,
          10_000,
          'outcomes recorded',
        );
      } finally {
        await worker.stop();
      }
      const rows = await t.database.db
        .selectFrom('deliveries')
        .innerJoin('events', 'events.id', 'deliveries.event_id')
        .select([
          'events.data',
          'deliveries.state',
          'deliveries.last_status',
          'deliveries.attempts',
          'deliveries.next_attempt_at',
        ])
        .where('deliveries.webhook_id', '=', hook.id)
        .execute();
      assert.equal(rows.length, 6);
      for (const r of rows) {
        const odd = /"name":"odd/.test(r.data);
        assert.equal(r.state, odd ? 'pending' : 'succeeded', r.data);
        assert.equal(r.last_status, odd ? 503 : 201, r.data);
        assert.equal(r.attempts, 1);
        if (odd) assert.equal(r.next_attempt_at, t.clock.now + t.config.webhookRetrySchedule[0]);
      }
      // A success in the batch means the webhook is not failing.
      const w = await t.database.db
        .selectFrom('webhooks')
        .select(['failing_since', 'active'])
        .where('id', '=', hook.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(w, { failing_since: null, active: 1 });
      // The retries left pending would keep their events from the purge test below.
      await t.database.db.deleteFrom('deliveries').where('webhook_id', '=', hook.id).execute();
      await call(t.app, a.token, 'DELETE', `/webhooks/${hook.id}`);
      await rx.close();
    });

    it('purges events and finished deliveries older than the retention, in batches, keeping pending ones', async () => {
      const hook = (
        await call(t.app, a.token, 'POST', '/webhooks', {
          webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['jobs.created'] }],
        })
      ).body.webhooks[0];
      await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'pending delivery' }] });
      // Queued as a worker would: the webhook's cursor reaches the last event.
      assert.equal(await fanOut(t.database, t.clock.now), 1);
      const before = Number(
        (
          await t.database.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      assert.ok(before > 30, `enough events for several batches (${before})`);
      // Nothing is old yet.
      assert.deepEqual(await purgeEvents(t.database, t.clock.now, 30), { events: 0, deliveries: 0 });
      const out = await purgeEvents(t.database, t.clock.now + 31 * 86_400_000, 30, 7);
      assert.ok(out.deliveries >= 60, JSON.stringify(out));
      assert.equal(out.events, before - 1, 'all but the event still being delivered');
      const left = await t.database.db.selectFrom('events').select('type').execute();
      assert.deepEqual(
        left.map((e) => e.type),
        ['jobs.created'],
      );
      const deliveries = await t.database.db.selectFrom('deliveries').select(['state', 'webhook_id']).execute();
      assert.deepEqual(deliveries, [{ state: 'pending', webhook_id: hook.id }]);
    });

    it('queues an event for a webhook as of its commit: sent though paused before the worker reads it, never when paused first', async () => {
      const db = t.database.db;
      await db.deleteFrom('webhooks').execute();
      const hook = (
        await call(t.app, a.token, 'POST', '/webhooks', {
          webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['jobs.created', 'webhooks.*'] }],
        })
      ).body.webhooks[0];
      const job = async (title: string) =>
        assert.equal((await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title }] })).status, 200);
      const active = async (on: boolean) =>
        assert.equal(
          (await call(t.app, a.token, 'PATCH', `/webhooks/${hook.id}`, { webhooks: [{ active: on }] })).status,
          200,
        );
      await job('while active');
      await active(false);
      await job('while paused');
      await active(true);
      await job('after resuming');
      // The worker reads all of it only now, the webhook active again.
      assert.equal(await fanOut(t.database, t.clock.now), 4);
      assert.deepEqual(
        (await queuedFor(hook.id)).map((d) => `${d.type} ${d.data.title ?? d.data.active}`),
        [
          'webhooks.created true', // its own creation
          'jobs.created while active',
          // the pause itself is not sent (the change applies first), nor what happened while paused
          'webhooks.updated true', // switched back on
          'jobs.created after resuming',
        ],
      );
      // Nothing is queued twice.
      assert.equal(await fanOut(t.database, t.clock.now), 0);
      await db.deleteFrom('webhooks').where('id', '=', hook.id).execute();
    });

    it("holds a webhook's later events back while too many of its deliveries wait for a first attempt", async () => {
      const db = t.database.db;
      const hook = (
        await call(t.app, a.token, 'POST', '/webhooks', {
          webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['clients.created'] }],
        })
      ).body.webhooks[0];
      assert.equal(
        (
          await call(t.app, a.token, 'POST', '/clients', {
            clients: [1, 2, 3, 4, 5].map((i) => ({ name: `held ${i}` })),
          })
        ).status,
        200,
      );
      assert.equal(await fanOut(t.database, t.clock.now, { waitingPerWebhook: 3 }), 3);
      assert.equal(
        await fanOut(t.database, t.clock.now, { waitingPerWebhook: 3 }),
        0,
        'three wait: the rest stay events',
      );
      // Attempted (a retry waits on its schedule): they no longer count.
      await db.updateTable('deliveries').set({ attempts: 1 }).where('webhook_id', '=', hook.id).execute();
      assert.equal(await fanOut(t.database, t.clock.now, { waitingPerWebhook: 3 }), 2);
      assert.deepEqual(
        (await queuedFor(hook.id)).map((d) => d.data.name),
        [1, 2, 3, 4, 5].map((i) => `held ${i}`),
        'each once, in order',
      );
      await db.deleteFrom('webhooks').where('id', '=', hook.id).execute();
    });

    it('walks a webhook paused with a full queue on to its pause: what came before is queued, the cursor reaches the end', async () => {
      const db = t.database.db;
      const hook = (
        await call(t.app, a.token, 'POST', '/webhooks', {
          webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['clients.created'] }],
        })
      ).body.webhooks[0];
      const clients = async (...names: string[]) =>
        assert.equal(
          (await call(t.app, a.token, 'POST', '/clients', { clients: names.map((name) => ({ name })) })).status,
          200,
        );
      await clients('p1', 'p2', 'p3', 'p4');
      assert.equal(await fanOut(t.database, t.clock.now, { waitingPerWebhook: 2 }), 2);
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/webhooks/${hook.id}`, { webhooks: [{ active: false }] })).status,
        200,
      );
      await clients('p5', 'p6');
      // Its queue is full and nothing of it is sent while paused: the limit no longer holds it.
      assert.equal(await fanOut(t.database, t.clock.now, { waitingPerWebhook: 2 }), 2);
      assert.deepEqual(
        (await queuedFor(hook.id)).map((d) => d.data.name),
        ['p1', 'p2', 'p3', 'p4'],
      );
      const cursor = await db
        .selectFrom('webhook_cursors')
        .select(['event_id', 'live'])
        .where('webhook_id', '=', hook.id)
        .executeTakeFirstOrThrow();
      const last = await db
        .selectFrom('events')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow();
      assert.deepEqual(cursor, { event_id: last.id, live: 0 }, 'nothing holds the retention back');
      await db.deleteFrom('webhooks').where('id', '=', hook.id).execute();
    });

    it('follows a webhook paused or resumed by SQL outside the server, which records no event', async () => {
      const db = t.database.db;
      const hook = (
        await call(t.app, a.token, 'POST', '/webhooks', {
          webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['clients.created'] }],
        })
      ).body.webhooks[0];
      const client = async (name: string) =>
        assert.equal((await call(t.app, a.token, 'POST', '/clients', { clients: [{ name }] })).status, 200);
      await client('s1');
      assert.equal(await fanOut(t.database, t.clock.now), 1);
      await db.updateTable('webhooks').set({ active: 0 }).where('id', '=', hook.id).execute();
      await client('s2');
      assert.equal(await fanOut(t.database, t.clock.now), 0, 'paused by SQL');
      await db.updateTable('webhooks').set({ active: 1 }).where('id', '=', hook.id).execute();
      await client('s3');
      assert.equal(await fanOut(t.database, t.clock.now), 1, 'resumed by SQL');
      assert.deepEqual(
        (await queuedFor(hook.id)).map((d) => d.data.name),
        ['s1', 's3'],
      );
      await db.deleteFrom('webhooks').where('id', '=', hook.id).execute();
    });

    it('deleting an event or a webhook deletes its deliveries, by the database itself (SQL written outside the server too)', async () => {
      // PostgreSQL keeps these links with delete triggers, SQLite with foreign keys (migration 016).
      const hooks = (
        await call(t.app, a.token, 'POST', '/webhooks', {
          webhooks: ['one', 'two'].map((d) => ({
            url: 'http://127.0.0.1:9/none',
            events: ['jobs.created'],
            description: d,
          })),
        })
      ).body.webhooks;
      await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'one' }, { title: 'two' }] });
      await fanOut(t.database, t.clock.now);
      const ids = hooks.map((h: { id: number }) => h.id);
      const queued = () =>
        t.database.db
          .selectFrom('deliveries')
          .select(['id', 'event_id', 'webhook_id'])
          .where('webhook_id', 'in', ids)
          .orderBy('event_id')
          .orderBy('webhook_id')
          .execute();
      const all = await queued();
      assert.equal(all.length, 4, 'two events, two webhooks');
      await t.database.db.deleteFrom('events').where('id', '=', all[0].event_id!).execute();
      const afterEvent = await queued();
      assert.deepEqual(
        afterEvent.map((d) => d.event_id),
        [all[2].event_id, all[2].event_id],
        'the other event keeps its deliveries',
      );
      await t.database.db.deleteFrom('webhooks').where('id', '=', ids[0]).execute();
      assert.deepEqual(
        (await queued()).map((d) => d.webhook_id),
        [ids[1]],
        'the other webhook keeps its delivery',
      );
      await t.database.db.deleteFrom('webhooks').where('id', '=', ids[1]).execute();
      assert.deepEqual(await queued(), []);
    });

    // PostgreSQL has no foreign key from a delivery to its webhook (migration 016): a webhook
    // deleted while a worker queues its deliveries must take them too (migration 017).
    if (dialect === 'postgres') {
      it('a webhook deleted while a worker queues its deliveries leaves none behind', async () => {
        const db = t.database.db;
        // Only this test's webhook: the worker's one insert of deliveries is its.
        await db.deleteFrom('webhooks').execute();
        const hook = (
          await call(t.app, a.token, 'POST', '/webhooks', {
            webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['jobs.created'] }],
          })
        ).body.webhooks[0];
        await fanOut(t.database, t.clock.now);
        await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'queued while the webhook goes' }] });
        // The worker's transaction stalls once its deliveries are inserted, holding the webhook's cursor.
        await sql`create function test_hold_queue() returns trigger language plpgsql as $$
          begin perform pg_advisory_xact_lock(4242); return null; end $$`.execute(db);
        await sql`create trigger deliveries_stall after insert on deliveries for each statement execute function test_hold_queue()`.execute(
          db,
        );
        const waitingOn = async (events: string[]) =>
          (
            await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and wait_event in (${sql.join(events)})`.execute(
              db,
            )
          ).rows[0].n;
        try {
          await db.connection().execute(async (holder) => {
            await sql`select pg_advisory_lock(4242)`.execute(holder);
            try {
              const queueing = fanOut(t.database, t.clock.now);
              await until(
                async () => (await waitingOn(['advisory'])) > 0,
                5_000,
                'the worker holding, its deliveries inserted',
              );
              const deletion = db.deleteFrom('webhooks').where('id', '=', hook.id).execute();
              await until(
                async () => (await waitingOn(['transactionid', 'tuple'])) > 0,
                5_000,
                'the deletion waiting for that worker',
              );
              await sql`select pg_advisory_unlock(4242)`.execute(holder);
              await deletion;
              assert.equal(await queueing, 1);
            } finally {
              await sql`select pg_advisory_unlock_all()`.execute(holder);
            }
          });
        } finally {
          await sql`drop trigger deliveries_stall on deliveries`.execute(db);
          await sql`drop function test_hold_queue()`.execute(db);
        }
        const left = await db.selectFrom('deliveries').select('id').where('webhook_id', '=', hook.id).execute();
        assert.deepEqual(left, [], 'no delivery for a webhook that is gone');
      });

      it('TRUNCATE of events or webhooks, which their foreign keys refused, takes their deliveries', async () => {
        const db = t.database.db;
        const hook = (
          await call(t.app, a.token, 'POST', '/webhooks', {
            webhooks: [{ url: 'http://127.0.0.1:9/none', events: ['jobs.created'] }],
          })
        ).body.webhooks[0];
        await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'truncated' }] });
        await fanOut(t.database, t.clock.now);
        const ping = await call(t.app, a.token, 'POST', `/webhooks/${hook.id}/ping`);
        assert.equal(ping.status, 200, ping.raw);
        const count = async () =>
          (
            await db.selectFrom('deliveries').select('type').where('webhook_id', '=', hook.id).orderBy('id').execute()
          ).map((d) => d.type);
        assert.deepEqual(await count(), ['jobs.created', 'webhook.ping']);
        await sql`truncate events`.execute(db);
        assert.deepEqual(await count(), ['webhook.ping'], 'a ping has no event: it stays');
        await sql`truncate webhooks`.execute(db);
        assert.deepEqual(await count(), []);
      });
    }
  });
}
