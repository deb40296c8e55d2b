import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../app.js';
import {
  DIALECTS,
  addUser,
  appWithTenants,
  call,
  checkResponsesAgainstOpenApi,
  createTenant,
  createTestDb,
  errorsOf,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../test/helpers.js';
import { startRelay, until, type TestRelay } from '../../test/smtp.js';
import { VALIDATION } from '../errors.js';
import { ConfigError, loadConfig } from '../config.js';
import { refusal } from './transport.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

const message = (extra: Record<string, unknown> = {}) => ({
  to: 'customer@example.com',
  subject: 'Your visit',
  text: 'We will be with you on Monday.\nThe crew',
  ...extra,
});

describe('mail settings', () => {
  const load = (env: Record<string, string>) => loadConfig({ PUBLIC_URL: 'https://fsm.example.com', ...env });
  it('SMTP_URL, MAIL_FROM and MAIL_RETRY_SCHEDULE are checked at start', () => {
    const c = load({});
    assert.equal(c.smtpUrl, undefined);
    assert.equal(c.mailFrom, 'no-reply@fsm.example.com');
    assert.deepEqual(c.mailRetrySchedule, [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]);
    const set = load({ SMTP_URL: 'smtps://u:p%40ss@mail.example.com:465', MAIL_FROM: 'Acme <office@acme.example>' });
    assert.equal(set.smtpUrl, 'smtps://u:p%40ss@mail.example.com:465');
    assert.equal(set.mailFrom, 'Acme <office@acme.example>');
    assert.deepEqual(load({ MAIL_RETRY_SCHEDULE: '10s,1h' }).mailRetrySchedule, [10_000, 3_600_000]);
    for (const env of <Record<string, string>[]>[
      { SMTP_URL: 'http://mail.example.com' },
      { SMTP_URL: 'smtp://' },
      { SMTP_URL: 'smtp://mail.example.com/path' },
      { MAIL_FROM: 'office@acme.example\r\nBcc: x@y.example' },
      { MAIL_FROM: 'Acme\n <office@acme.example>' },
      { MAIL_FROM: 'nobody' },
      { MAIL_RETRY_SCHEDULE: 'soon' },
    ])
      assert.throws(() => load(env), ConfigError, JSON.stringify(env));
  });
  it('a 5xx refusal is final; a 4xx or a connection failure is not', () => {
    assert.deepEqual(refusal(Object.assign(new Error('550 no\r\nsuch'), { responseCode: 550 })), {
      ok: false,
      permanent: true,
      error: '550 no such',
    });
    assert.equal(refusal(Object.assign(new Error('451 later'), { responseCode: 451 })).ok, false);
    assert.equal(
      (refusal(Object.assign(new Error('451'), { responseCode: 451 })) as { permanent: boolean }).permanent,
      false,
    );
    assert.equal((refusal(new Error('connect ECONNREFUSED')) as { permanent: boolean }).permanent, false);
  });
});

for (const dialect of DIALECTS) {
  describe(`messages over SMTP (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let relay: TestRelay;
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      relay = await startRelay();
      ({ t, a, b } = await appWithTenants(dialect, {
        env: { SMTP_URL: relay.url, MAIL_FROM: 'Acme Plumbing <office@acme.example>', MAIL_RETRY_SCHEDULE: '1m,5m' },
      }));
    });
    after(async () => {
      await t?.close();
      await relay?.close();
    });
    const post = (items: unknown[], token = a.token) => call(t.app, token, 'POST', '/messages', { messages: items });
    const get = async (id: number, token = a.token) =>
      (await call(t.app, token, 'GET', `/messages/${id}?fields=*`)).body.messages[0];
    const settled = (id: number, token = a.token) =>
      until(async () => (await get(id, token)).state !== 'queued', 10_000, `message ${id} to settle`);
    const received = (to: string) => relay.received.filter((r) => r.to.includes(to));

    it('a message is sent at once from MAIL_FROM, with its Message-ID; each change of state is an event', async () => {
      const res = await post([message({ to: 'ok1@example.com' })]);
      assert.equal(res.status, 200, res.raw);
      const m = res.body.messages[0];
      assert.equal(m.state, 'queued');
      assert.match(m.messageId, /^<[0-9a-f]{32}@acme\.example>$/);
      await settled(m.id);
      const sent = await get(m.id);
      assert.equal(sent.state, 'sent');
      assert.equal(sent.attempts, 1);
      assert.equal(sent.lastError, null);
      assert.ok(sent.sentAt);
      const [r] = received('ok1@example.com');
      assert.deepEqual(r.to, ['ok1@example.com']);
      assert.equal(r.from, 'office@acme.example');
      assert.equal(r.mail.messageId, m.messageId);
      assert.equal(r.mail.subject, 'Your visit');
      assert.equal(r.mail.text?.trim(), 'We will be with you on Monday.\nThe crew');
      assert.equal(r.mail.from?.value[0].address, 'office@acme.example');
      const events = (await call(t.app, a.token, 'GET', `/events?where=collection='messages' and item.id=${m.id}`)).body
        .events;
      assert.deepEqual(
        events.map((e: { type: string }) => e.type),
        ['messages.created', 'messages.updated'],
      );
      assert.deepEqual(events[1].changes.state, { old: 'queued', new: 'sent' });
      assert.equal(events[1].actor, null);
      // Another account sees none of it.
      assert.equal((await call(t.app, b.token, 'GET', `/messages/${m.id}`)).status, 404);
    });

    it('a 4xx is retried after the schedule with the same Message-ID; a 5xx fails at once', async () => {
      let refusals = 1;
      relay.refuse = (r) =>
        r.to.includes('temp@example.com') && refusals-- > 0 ? 451 : r.to.includes('perm@example.com') ? 550 : undefined;
      const [temp, perm] = (await post([message({ to: 'temp@example.com' }), message({ to: 'perm@example.com' })])).body
        .messages;
      await settled(perm.id);
      const failed = await get(perm.id);
      assert.equal(failed.state, 'failed');
      assert.equal(failed.attempts, 1);
      assert.match(failed.lastError, /550/);
      await until(async () => (await get(temp.id)).attempts === 1, 10_000, 'first attempt');
      const waiting = await get(temp.id);
      assert.equal(waiting.state, 'queued');
      assert.match(waiting.lastError, /451/);
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(received('temp@example.com').length, 1, 'no retry before the delay');
      t.clock.now += 60_000;
      await settled(temp.id);
      const sent = await get(temp.id);
      assert.equal(sent.state, 'sent');
      assert.equal(sent.attempts, 2);
      const both = received('temp@example.com');
      assert.equal(both.length, 2);
      assert.equal(both[0].mail.messageId, temp.messageId);
      assert.equal(both[1].mail.messageId, temp.messageId, 'the same Message-ID on every attempt');
      relay.refuse = () => undefined;
    });

    it('a temporary refusal every time fails after the last retry', async () => {
      relay.refuse = (r) => (r.to.includes('busy@example.com') ? 421 : undefined);
      const [m] = (await post([message({ to: 'busy@example.com' })])).body.messages;
      for (const attempts of [1, 2]) {
        await until(async () => (await get(m.id)).attempts === attempts, 10_000, `attempt ${attempts}`);
        assert.equal((await get(m.id)).state, 'queued');
        t.clock.now += 5 * 60_000;
      }
      await settled(m.id);
      const failed = await get(m.id);
      assert.equal(failed.state, 'failed');
      assert.equal(failed.attempts, 3);
      relay.refuse = () => undefined;
    });

    it('emailOptOut: a message to the client, its address or its contacts fails as `opted out`, never sent', async () => {
      const [client] = (
        await call(t.app, a.token, 'POST', '/clients', {
          clients: [{ name: 'No Mail Ltd', email: 'NoMail@Example.com', emailOptOut: true }],
        })
      ).body.clients;
      const optOut = async (id: number) =>
        (await call(t.app, a.token, 'GET', `/clients/${id}?fields=emailOptOut`)).body.clients[0].emailOptOut;
      assert.equal(await optOut(client.id), true);
      const plain = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Plain' }] })).body.clients[0];
      assert.equal(await optOut(plain.id), false, 'default false');
      await call(t.app, a.token, 'POST', '/contacts', {
        contacts: [{ client: { id: client.id }, firstName: 'Ann', lastName: 'Other', email: 'ann@nomail.example' }],
      });
      const res = await post([
        message({ to: 'someone@else.example', client: { id: client.id } }),
        message({ to: 'nomail@example.com' }),
        message({ to: 'ANN@nomail.example' }),
      ]);
      assert.equal(res.status, 200, res.raw);
      for (const m of res.body.messages) {
        assert.equal(m.state, 'failed');
        assert.equal(m.lastError, 'opted out');
      }
      // Opting out after a message was queued still stops it.
      relay.refuse = () => 451;
      const [late] = (await post([message({ to: 'late@plain.example', client: { id: plain.id } })])).body.messages;
      await until(async () => (await get(late.id)).attempts === 1, 10_000, 'first attempt');
      relay.refuse = () => undefined;
      await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: plain.id, emailOptOut: true }] });
      t.clock.now += 60_000;
      await settled(late.id);
      assert.equal((await get(late.id)).lastError, 'opted out');
      assert.equal(received('someone@else.example').length + received('nomail@example.com').length, 0);
      assert.equal(received('ann@nomail.example').length + received('late@plain.example').length, 1);
    });

    it('every member is validated; an address or subject with a line break never reaches the relay', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ to: 'victim@example.com\r\nBcc: all@example.com' }, code('invalid', 'to')],
        [{ to: 'victim@example.com\nbcc@example.com' }, code('invalid', 'to')],
        [{ to: 'a@example.com, b@example.com' }, code('invalid', 'to')],
        [{ to: 'Eve <eve@example.com>' }, code('invalid', 'to')],
        [{ to: 'not an address' }, code('invalid', 'to')],
        [{ to: `${'x'.repeat(250)}@example.com` }, code('invalid', 'to')],
        [{ subject: 'Hello\r\nBcc: all@example.com' }, code('invalid', 'subject')],
        [{ subject: 'x'.repeat(201) }, code('invalid', 'subject')],
        [{ subject: '' }, code('invalid', 'subject')],
        [{ text: 'x'.repeat(20_001) }, code('invalid', 'text')],
        [{ text: 7 }, code('invalid', 'text')],
        [{ client: { id: 999999 } }, code('reference', 'client')],
        [{ state: 'sent' }, code('readOnly', 'state')],
        [{ messageId: '<mine@example.com>' }, code('readOnly', 'messageId')],
      ];
      for (const [extra, expected] of cases) {
        const res = await post([message(extra)]);
        assert.equal(res.status, 422, JSON.stringify(extra));
        assert.deepEqual(errorsOf(res), [expected], JSON.stringify(extra));
      }
      for (const missing of ['to', 'subject', 'text']) {
        const m: Record<string, unknown> = message();
        delete m[missing];
        assert.deepEqual(errorsOf(await post([m])), [code('required', missing)]);
      }
      // Another account's quote is no reference.
      const otherClient = (await call(t.app, b.token, 'POST', '/clients', { clients: [{ name: 'B' }] })).body
        .clients[0];
      assert.deepEqual(errorsOf(await post([message({ client: { id: otherClient.id } })])), [
        code('reference', 'client'),
      ]);
      assert.ok(relay.received.every((r) => !r.raw.includes('all@example.com') && !r.raw.includes('Bcc')));
      // A 20,000-character text and a 200-character subject are fine.
      const ok = await post([message({ to: 'long@example.com', subject: 's'.repeat(200), text: 't'.repeat(20_000) })]);
      assert.equal(ok.status, 200, ok.raw);
    });

    it('Contractors neither read nor write messages; messages are never changed nor deleted', async () => {
      const con = await addUser(t, a, 'contractor');
      assert.equal((await post([message()], con.token)).status, 403);
      assert.equal((await call(t.app, con.token, 'GET', '/messages')).status, 403);
      const [m] = (await post([message({ to: 'fixed@example.com' })])).body.messages;
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/messages/${m.id}`, { messages: [{ subject: 'x' }] })).status,
        405,
      );
      assert.equal((await call(t.app, a.token, 'DELETE', `/messages/${m.id}`)).status, 405);
    });
  });

  describe(
    `messages without a relay, across restarts and processes (${dialect})`,
    { skip: skipUnless(dialect) },
    () => {
      it('without SMTP_URL messages stay queued; a restart with it sends each once, with two processes sending', async () => {
        const relay = await startRelay();
        const db = await createTestDb(dialect);
        const clock = { now: Date.now() };
        const boot = async (smtpUrl?: string) => {
          const app = await buildApp({
            config: { ...db.config, smtpUrl, mailRetrySchedule: [60_000] },
            database: db.database,
            clock: () => clock.now,
          });
          await app.ready();
          await checkResponsesAgainstOpenApi(app);
          return app;
        };
        try {
          const first = await boot();
          const a = await createTenant({ ...db, app: first, clock, close: async () => {} });
          const made = await call(first, a.token, 'POST', '/messages', {
            messages: Array.from({ length: 40 }, (_, i) => message({ to: `r${i}@example.com` })),
          });
          assert.equal(made.status, 200, made.raw);
          await new Promise((r) => setTimeout(r, 500));
          const listed = (await call(first, a.token, 'GET', '/messages?recordsPerPage=100')).body.messages;
          assert.ok(listed.every((m: { state: string; attempts: number }) => m.state === 'queued' && m.attempts === 0));
          await first.close();
          // Two processes on the same storage, both with the relay: each message is sent once.
          const [p1, p2] = [await boot(relay.url), await boot(relay.url)];
          await until(async () => relay.received.length >= 40, 15_000, '40 messages');
          await until(
            async () =>
              (await call(p1, a.token, 'GET', "/messages?recordsPerPage=100&where=state='sent'")).body.messages
                .length === 40,
            10_000,
            'all sent',
          );
          await new Promise((r) => setTimeout(r, 400));
          const ids = relay.received.map((r) => r.mail.messageId);
          assert.equal(ids.length, 40, 'none sent twice');
          assert.equal(new Set(ids).size, 40);
          await p1.close();
          await p2.close();
          // The relay down: a connection failure is retried, then fails.
          const down = await boot('smtp://127.0.0.1:1');
          const [m] = (await call(down, a.token, 'POST', '/messages', { messages: [message()] })).body.messages;
          const read = async () => (await call(down, a.token, 'GET', `/messages/${m.id}?fields=*`)).body.messages[0];
          await until(async () => (await read()).attempts === 1, 15_000, 'first attempt');
          assert.equal((await read()).state, 'queued');
          assert.match((await read()).lastError, /ECONNREFUSED|connect/i);
          clock.now += 60_000;
          await until(async () => (await read()).state === 'failed', 15_000, 'failed');
          assert.equal((await read()).attempts, 2);
          await down.close();
        } finally {
          await db.close();
          await relay.close();
        }
      });
    },
  );
}
