import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';
import { startReceiver, until, type Answer, type Received } from '../../../test/receiver.js';
import { PER_WEBHOOK } from './deliveries/worker.js';

for (const dialect of DIALECTS) {
  describe(`webhooks (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    before(async () => {
      t.config.webhooksAllowPrivateUrls = true;
      t.config.webhookRetrySchedule = [1000, 1000];
    });

    const subscribe = async (url: string, events: string[] = ['*']) => {
      const res = await call(t.app, a.token, 'POST', '/webhooks', { webhooks: [{ url, events }] });
      assert.equal(res.status, 200, res.raw);
      return res.body.webhooks[0] as {
        id: number;
        secret: string;
        url: string;
        active: boolean;
        disabledReason: string | null;
      };
    };
    const deliveriesOf = async (webhook: number) =>
      (await call(t.app, a.token, 'GET', `/deliveries?where=${encodeURIComponent(`webhook.id = ${webhook}`)}&fields=*`))
        .body.deliveries as Record<string, any>[];
    const newClient = async (name = 'Hooked') =>
      (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name }] })).body.clients[0] as { id: number };
    /** Moves the app's clock (retry schedules, leases), with a fresh token for the new time. */
    const advance = async (ms: number) => {
      t.clock.now += ms;
      a.token = await a.tokenFor(a.adminId);
      b.token = await b.tokenFor(b.adminId);
    };
    const drop = (id: number) => call(t.app, a.token, 'DELETE', `/webhooks/${id}`);

    it('delivers matching events signed per Standard Webhooks, off the request path', async () => {
      const rx = await startReceiver();
      const hook = await subscribe(rx.url, ['clients.created']);
      assert.match(hook.secret, /^whsec_/);
      const c = await newClient();
      await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'not subscribed' }] });
      await until(() => rx.received.length >= 1, 10_000, 'a delivery');
      const r = rx.received[0];
      const payload = new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>) as {
        type: string;
        timestamp: string;
        data: Record<string, any>;
      };
      assert.equal(payload.type, 'clients.created');
      assert.equal(payload.data.type, 'clients.created');
      assert.deepEqual(payload.data.item, { id: c.id });
      assert.equal(payload.data.data.name, 'Hooked');
      assert.equal(payload.timestamp, payload.data.occurred);
      assert.match(String(r.headers['webhook-id']), /^msg_/);
      assert.throws(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
          r.body,
          r.headers as Record<string, string>,
        ),
      );
      await until(async () => (await deliveriesOf(hook.id))[0]?.state === 'succeeded', 5000, 'succeeded');
      const [d] = await deliveriesOf(hook.id);
      assert.deepEqual(
        { webhook: d.webhook.id, type: d.type, attempts: d.attempts, lastStatus: d.lastStatus },
        { webhook: hook.id, type: 'clients.created', attempts: 1, lastStatus: 200 },
      );
      assert.ok(d.event.id > 0);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(rx.received.length, 1, 'jobs.created was not subscribed');
      await drop(hook.id);
      await rx.close();
    });

    it('retries a failed attempt with the same webhook-id, on the schedule', async () => {
      const rx = await startReceiver((_r, n) => ({ status: n === 1 ? 500 : 200 }));
      const hook = await subscribe(rx.url, ['clients.*']);
      await newClient('retry');
      await until(() => rx.received.length >= 1, 10_000, 'first attempt');
      await until(async () => (await deliveriesOf(hook.id))[0]?.lastStatus === 500, 5000, 'the failure recorded');
      let [d] = await deliveriesOf(hook.id);
      assert.equal(d.state, 'pending');
      assert.equal(Date.parse(d.nextAttemptAt), t.clock.now + 1000);
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(rx.received.length, 1, 'not before the schedule says');
      await advance(1000);
      await until(() => rx.received.length >= 2, 10_000, 'the retry');
      assert.equal(rx.received[1].headers['webhook-id'], rx.received[0].headers['webhook-id']);
      new Webhook(hook.secret).verify(rx.received[1].body, rx.received[1].headers as Record<string, string>);
      await until(async () => (await deliveriesOf(hook.id))[0]?.state === 'succeeded', 5000, 'succeeded');
      [d] = await deliveriesOf(hook.id);
      assert.equal(d.attempts, 2);
      await drop(hook.id);
      await rx.close();
    });

    it('honours a longer Retry-After, gives up after the schedule, and POST /deliveries/:id/retry sends again', async () => {
      const answers: Answer[] = [
        { status: 503, headers: { 'retry-after': '3600' } },
        { status: 500 },
        { status: 500 },
        { status: 200 },
      ];
      const rx = await startReceiver((_r, n) => answers[n - 1] ?? { status: 200 });
      const hook = await subscribe(rx.url, ['clients.created']);
      // A Retry-After is honoured up to the schedule's longest step (here 2 h).
      t.config.webhookRetrySchedule = [1000, 7_200_000];
      await newClient('later');
      await until(async () => (await deliveriesOf(hook.id))[0]?.lastStatus === 503, 10_000, 'first attempt');
      let [d] = await deliveriesOf(hook.id);
      assert.equal(Date.parse(d.nextAttemptAt), t.clock.now + 3_600_000);
      await advance(3_600_000);
      // Its outcome recorded (its next attempt set from the clock) before the clock moves on.
      await until(
        async () => rx.received.length >= 2 && (await deliveriesOf(hook.id))[0]?.lastStatus === 500,
        10_000,
        'second attempt',
      );
      await advance(7_200_000);
      t.config.webhookRetrySchedule = [1000, 1000];
      await until(
        async () => (await deliveriesOf(hook.id))[0]?.state === 'failed',
        10_000,
        'given up after two retries',
      );
      [d] = await deliveriesOf(hook.id);
      assert.equal(d.attempts, 3);
      assert.equal(rx.received.length, 3);
      const retried = await call(t.app, a.token, 'POST', `/deliveries/${d.id}/retry`);
      assert.equal(retried.status, 200, retried.raw);
      assert.equal(retried.body.deliveries[0].state, 'pending');
      await until(async () => (await deliveriesOf(hook.id))[0]?.state === 'succeeded', 10_000, 'sent again');
      assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 1);
      await drop(hook.id);
      await rx.close();
    });

    it('disables a webhook on 410 (gone) and after 5 days of failures (failing); active again clears it', async () => {
      const gone = await startReceiver(() => ({ status: 410 }));
      const hook = await subscribe(gone.url, ['clients.created']);
      await newClient('gone');
      await until(
        async () =>
          (await call(t.app, a.token, 'GET', `/webhooks/${hook.id}`)).body.webhooks[0].disabledReason === 'gone',
        10_000,
        'gone',
      );
      const got = (await call(t.app, a.token, 'GET', `/webhooks/${hook.id}`)).body.webhooks[0];
      assert.equal(got.active, false);
      assert.equal((await deliveriesOf(hook.id))[0].state, 'failed');
      const ev = await call(
        t.app,
        a.token,
        'GET',
        `/events?where=${encodeURIComponent(`type = 'webhooks.updated' and item.id = ${hook.id}`)}`,
      );
      assert.deepEqual(ev.body.events[0].changes.disabledReason, { old: null, new: 'gone' });
      assert.equal(ev.body.events[0].actor, null);
      await newClient('not sent');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(gone.received.length, 1);
      const again = await call(t.app, a.token, 'PATCH', `/webhooks/${hook.id}`, { webhooks: [{ active: true }] });
      assert.equal(again.body.webhooks[0].disabledReason, null);
      await drop(hook.id);
      await gone.close();

      const failing = await startReceiver(() => ({ status: 500 }));
      const f = await subscribe(failing.url, ['clients.created']);
      await newClient('f1');
      await until(() => failing.received.length >= 1, 10_000, 'first failure');
      await until(async () => (await deliveriesOf(f.id))[0]?.lastStatus === 500, 5000, 'recorded');
      await advance(5 * 86_400_000);
      await newClient('f2');
      await until(
        async () =>
          (await call(t.app, a.token, 'GET', `/webhooks/${f.id}`)).body.webhooks[0].disabledReason === 'failing',
        10_000,
        'failing',
      );
      await drop(f.id);
      await failing.close();
    });

    it('pings at once and rotates the secret: both secrets sign for 24 h', async () => {
      const rx = await startReceiver();
      const hook = await subscribe(rx.url, ['jobs.deleted']);
      const ping = await call(t.app, a.token, 'POST', `/webhooks/${hook.id}/ping`);
      assert.equal(ping.status, 200, ping.raw);
      assert.equal(ping.body.deliveries[0].type, 'webhook.ping');
      await until(() => rx.received.length >= 1, 10_000, 'the ping');
      const body = new Webhook(hook.secret).verify(
        rx.received[0].body,
        rx.received[0].headers as Record<string, string>,
      ) as { type: string; data: unknown };
      assert.deepEqual([body.type, body.data], ['webhook.ping', { webhook: { id: hook.id } }]);
      const rotated = await call(t.app, a.token, 'POST', `/webhooks/${hook.id}/rotateSecret`);
      const secret = rotated.body.webhooks[0].secret as string;
      assert.notEqual(secret, hook.secret);
      await call(t.app, a.token, 'POST', `/webhooks/${hook.id}/ping`);
      await until(() => rx.received.length >= 2, 10_000, 'the second ping');
      for (const s of [secret, hook.secret])
        new Webhook(s).verify(rx.received[1].body, rx.received[1].headers as Record<string, string>);
      await advance(86_400_001);
      await call(t.app, a.token, 'POST', `/webhooks/${hook.id}/ping`);
      await until(() => rx.received.length >= 3, 10_000, 'the third ping');
      new Webhook(secret).verify(rx.received[2].body, rx.received[2].headers as Record<string, string>);
      assert.throws(() =>
        new Webhook(hook.secret).verify(rx.received[2].body, rx.received[2].headers as Record<string, string>),
      );
      assert.equal((await call(t.app, a.token, 'POST', '/webhooks/ping')).status, 404);
      await drop(hook.id);
      await rx.close();
    });

    it('keeps a slow receiver from delaying another webhook', async () => {
      const slow = await startReceiver(() => ({ status: 200, delayMs: 4000 }));
      const fast = await startReceiver();
      const s = await subscribe(slow.url, ['clients.created']);
      const f = await subscribe(fast.url, ['clients.created']);
      const started = Date.now();
      const n = PER_WEBHOOK + 4;
      for (let i = 0; i < n; i++) await newClient(`slow-${i}`);
      await until(() => fast.received.length >= n, 3000, 'the fast receiver served while the slow one stalls');
      assert.ok(Date.now() - started < 3000);
      await until(() => slow.received.length >= PER_WEBHOOK, 3000, 'the slow receiver given its slots');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(slow.received.length, PER_WEBHOOK, 'a bounded number in flight to one webhook');
      await drop(s.id);
      await drop(f.id);
      await slow.close();
      await fast.close();
    });

    it("never lets one account reach another's webhooks, deliveries or events", async () => {
      const theirs = (
        await call(t.app, b.token, 'POST', '/webhooks', {
          webhooks: [{ url: 'http://127.0.0.1:9/b', events: ['*'], active: false }],
        })
      ).body.webhooks[0];
      const ping = (await call(t.app, b.token, 'POST', `/webhooks/${theirs.id}/ping`)).body.deliveries[0];
      const event = (await call(t.app, b.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0];
      for (const [method, url] of [
        ['GET', `/webhooks/${theirs.id}`],
        ['POST', `/webhooks/${theirs.id}/ping`],
        ['POST', `/webhooks/${theirs.id}/rotateSecret`],
        ['GET', `/deliveries/${ping.id}`],
        ['POST', `/deliveries/${ping.id}/retry`],
        ['GET', `/events/${event.id}`],
      ]) {
        assert.equal((await call(t.app, a.token, method, url)).status, 404, `${method} ${url}`);
      }
      const mine = await call(t.app, a.token, 'GET', `/deliveries?where=${encodeURIComponent(`id = ${ping.id}`)}`);
      assert.deepEqual(mine.body.deliveries, []);
      assert.equal((await call(t.app, b.token, 'GET', `/deliveries/${ping.id}`)).status, 200);
    });

    it('is for Administrators only, and deliveries are read-only', async () => {
      const employee = await addUser(t, a, 'employee');
      assert.equal((await call(t.app, employee.token, 'GET', '/webhooks')).status, 403);
      assert.equal((await call(t.app, employee.token, 'GET', '/deliveries')).status, 403);
      assert.equal((await call(t.app, a.token, 'POST', '/deliveries', { deliveries: [{}] })).status, 405);
      const readOnly = await a.tokenFor(a.adminId, ['webhooks.read']);
      assert.equal((await call(t.app, readOnly, 'GET', '/deliveries')).status, 200);
      assert.equal((await call(t.app, readOnly, 'POST', '/deliveries/1/retry')).status, 403);
    });

    it('refuses private, loopback and link-local targets, and plain http, unless allowed', async () => {
      const refused = async (url: string) =>
        errorsOf(await call(t.app, a.token, 'POST', '/webhooks', { webhooks: [{ url, events: ['*'] }] }));
      t.config.webhooksAllowPrivateUrls = false;
      try {
        for (const url of [
          'http://example.com/hook',
          'https://127.0.0.1/hook',
          'https://10.1.2.3/',
          'https://192.168.1.1/',
          'https://[::1]/',
          'https://[::ffff:127.0.0.1]/',
          'https://169.254.169.254/latest',
          'https://localhost/hook',
          'https://vm/hook',
          // Special-purpose ranges of the IANA registries (src/collections/webhooks/ranges.ts).
          'https://192.0.2.1/',
          'https://198.51.100.7/',
          'https://203.0.113.10/',
          'https://[::127.0.0.1]/',
          'https://[64:ff9b:1::1]/',
          'https://[64:ff9b::7f00:1]/',
          'https://[2002:7f00:1::1]/',
          'https://[fec0::1]/',
          'https://[100::1]/',
          'https://[2001::1]/',
          'https://0.0.0.0/',
        ]) {
          assert.deepEqual(await refused(url), ['1041:url'], url);
        }
      } finally {
        t.config.webhooksAllowPrivateUrls = true;
      }
      assert.deepEqual(await refused('http://169.254.169.254/latest'), ['1041:url'], 'link-local always');
      assert.deepEqual(await refused('http://[fe80::1]/'), ['1041:url']);
      assert.deepEqual(await refused('ftp://127.0.0.1/'), ['1041:url']);
      // Allowing private URLs lets loopback and private ranges through, never the special-purpose ones.
      for (const url of [
        'http://192.0.2.1/',
        'http://[64:ff9b::a9fe:a9fe]/',
        'http://[::127.0.0.1]/',
        'http://0.0.0.0/',
      ])
        assert.deepEqual(await refused(url), ['1041:url'], url);

      // Checked again after DNS resolution at each attempt: a name resolving to loopback.
      const rx = await startReceiver();
      const hook = await subscribe(`http://localhost:${rx.port}/hook`, ['clients.created']);
      await call(t.app, a.token, 'PATCH', `/webhooks/${hook.id}`, {
        webhooks: [{ url: `https://localhost:${rx.port}/hook` }],
      });
      t.config.webhooksAllowPrivateUrls = false;
      try {
        await newClient('ssrf');
        await until(async () => /refused/.test((await deliveriesOf(hook.id))[0]?.lastError ?? ''), 10_000, 'refused');
        assert.match((await deliveriesOf(hook.id))[0].lastError, /loopback/);
        assert.equal(rx.received.length, 0);
      } finally {
        t.config.webhooksAllowPrivateUrls = true;
      }
      await drop(hook.id);
      await rx.close();
    });
  });
}

export type { Received };
