import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import { hashToken } from '../src/auth/secrets.js';
import { addUser, suiteWithTenants, call, DIALECTS, skipUnless } from './helpers.js';

const DAY = 24 * 3600 * 1000;

/** The events of a feed, parsed back by an independent library (ical.js). */
function parse(text: string) {
  const cal = new ICAL.Component(ICAL.parse(text));
  return cal.getAllSubcomponents('vevent').map((e) => ({
    uid: String(e.getFirstPropertyValue('uid')),
    summary: String(e.getFirstPropertyValue('summary')),
    location: e.getFirstPropertyValue('location') as string | null,
    status: e.getFirstPropertyValue('status') as string | null,
    start: (e.getFirstPropertyValue('dtstart') as ICAL.Time).toJSDate().getTime(),
    end: (e.getFirstPropertyValue('dtend') as ICAL.Time).toJSDate().getTime(),
  }));
}

for (const dialect of DIALECTS) {
  describe(`calendar feeds (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let crew: { id: number; token: string };
    let office: { id: number; token: string };
    let job: number;
    const visits: Record<string, number> = {};

    const feed = (url: string, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url: new URL(url).pathname, headers });
    const link = async (token: string, userId: number, action = 'calendarLink') =>
      call(t.app, token, 'POST', `/users/${userId}/${action}`);
    const iso = (ms: number) => new Date(ms).toISOString();

    before(async () => {
      crew = await addUser(t, a, 'contractor');
      office = await addUser(t, a, 'employee');
      const j = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: [{ title: 'Boiler service', address: { line1: '1 High St', city: 'Leeds', postcode: 'LS1 1AA' } }],
      });
      job = j.body.jobs[0].id;
      const now = Date.now();
      const add = async (name: string, user: number, start: number, hours = 2, extra = {}) => {
        const res = await call(t.app, a.token, 'POST', '/visits', {
          visits: [
            {
              job: { id: job },
              user: { id: user },
              label: name,
              startTime: iso(start),
              endTime: iso(start + hours * 3600_000),
              ...extra,
            },
          ],
        });
        assert.equal(res.status, 200, res.raw);
        visits[name] = res.body.visits[0].id;
      };
      await add('Tomorrow', crew.id, now + DAY);
      await add('Cancelled', crew.id, now + 2 * DAY, 1, { state: 'cancelled' });
      await add('Last week', crew.id, now - 7 * DAY);
      await add('Long ago', crew.id, now - 40 * DAY);
      await add('Next year+', crew.id, now + 400 * DAY);
      await add('Deleted', crew.id, now + 3 * DAY);
      await add('Someone else', office.id, now + DAY);
      await call(t.app, a.token, 'PATCH', `/visits/${visits.Deleted}`, { visits: [{ deleted: true }] });
    });

    test('calendarLink: the user themself (users.read is enough) or an Administrator; the URL is shown once, stored as a hash', async () => {
      const readOnly = await a.tokenFor(crew.id, ['users.read']);
      const res = await link(readOnly, crew.id);
      assert.equal(res.status, 200, res.raw);
      const url = res.body.users[0].calendarUrl as string;
      assert.ok(url.startsWith(`${t.config.publicUrl}/calendar/`), url);
      assert.equal(res.body.users[0].id, crew.id);
      const token = new URL(url).pathname
        .split('/')
        .pop()!
        .replace(/\.ics$/, '');
      const row = await t.database.db
        .selectFrom('users')
        .select('calendar_token_hash')
        .where('id', '=', crew.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.calendar_token_hash, hashToken(token));
      // Not shown again.
      const read = await call(t.app, a.token, 'GET', `/users/${crew.id}?fields=*`);
      assert.ok(!JSON.stringify(read.body).includes(token));

      assert.equal((await link(office.token, crew.id)).status, 403);
      assert.equal((await link(await a.tokenFor(crew.id, ['jobs.read']), crew.id)).status, 403);
      assert.equal((await link(b.token, crew.id)).status, 404);
      assert.equal((await link(a.token, office.id)).status, 200);
    });

    test('the feed: the user’s visits in the window, UTC, stable UIDs, summary, location, cancelled; ETag and 304', async () => {
      const url = (await link(crew.token, crew.id)).body.users[0].calendarUrl as string;
      const res = await feed(url);
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/calendar/);
      assert.match(res.body, /^DTSTART:\d{8}T\d{6}Z\r?$/m);
      const events = parse(res.body);
      const byName = new Map(events.map((e) => [e.summary.split(' – ')[0], e]));
      assert.deepEqual([...byName.keys()].sort(), ['Cancelled', 'Last week', 'Tomorrow']);
      const tomorrow = byName.get('Tomorrow')!;
      assert.equal(tomorrow.summary, 'Tomorrow – Boiler service');
      assert.equal(tomorrow.location, '1 High St, Leeds, LS1 1AA');
      assert.equal(tomorrow.status, 'CONFIRMED');
      assert.equal(byName.get('Cancelled')!.status, 'CANCELLED');
      const stored = await call(t.app, a.token, 'GET', `/visits/${visits.Tomorrow}`);
      // iCalendar times are to the second.
      const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000) * 1000;
      assert.equal(tomorrow.start, seconds(stored.body.visits[0].startTime));
      assert.equal(tomorrow.end, seconds(stored.body.visits[0].endTime));

      const etag = String(res.headers.etag);
      assert.match(etag, /^"[^"]+"$/);
      const again = await feed(url);
      assert.equal(again.headers.etag, etag);
      assert.deepEqual(
        parse(again.body).map((e) => e.uid),
        events.map((e) => e.uid),
      );
      assert.equal((await feed(url, { 'if-none-match': etag })).statusCode, 304);
      await call(t.app, a.token, 'PATCH', `/visits/${visits.Tomorrow}`, { visits: [{ label: 'Tomorrow AM' }] });
      const changed = await feed(url, { 'if-none-match': etag });
      assert.equal(changed.statusCode, 200);
      assert.notEqual(changed.headers.etag, etag);
      assert.equal(parse(changed.body).find((e) => e.uid === tomorrow.uid)?.summary, 'Tomorrow AM – Boiler service');
    });

    test('each event describes the visit: client, phone, job reference, notes; the feed ends with CRLF', async () => {
      const client = await call(t.app, a.token, 'POST', '/clients', {
        clients: [{ name: 'Mrs Jones', phone: '+441132000000', mobile: '+447700900123' }],
      });
      assert.equal(client.status, 200, client.raw);
      const j = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: [{ title: 'Leaking tap', client: { id: client.body.clients[0].id } }],
      });
      assert.equal(j.status, 200, j.raw);
      const start = Date.now() + 5 * DAY;
      const v = await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: j.body.jobs[0].id },
            user: { id: crew.id },
            label: 'Fix tap',
            notes: 'Key under the mat; dog, friendly',
            startTime: iso(start),
            endTime: iso(start + 3600_000),
          },
        ],
      });
      assert.equal(v.status, 200, v.raw);
      const url = (await link(crew.token, crew.id)).body.users[0].calendarUrl as string;
      const res = await feed(url);
      assert.equal(res.statusCode, 200);
      // RFC 5545 §3.1: every line, the last one included, ends with CRLF; no bare LF anywhere.
      assert.ok(res.body.endsWith('END:VCALENDAR\r\n'), JSON.stringify(res.body.slice(-30)));
      assert.doesNotMatch(res.body, /[^\r]\n/);
      const cal = new ICAL.Component(ICAL.parse(res.body));
      const byLabel = new Map(
        cal
          .getAllSubcomponents('vevent')
          .map((e) => [String(e.getFirstPropertyValue('summary')).split(' – ')[0], e] as const),
      );
      const event = byLabel.get('Fix tap')!;
      assert.ok(event, 'the visit is in the feed');
      assert.equal(
        event.getFirstPropertyValue('description'),
        `Client: Mrs Jones\nPhone: +441132000000, +447700900123\nJob: ${j.body.jobs[0].reference} – Leaking tap\nNotes: Key under the mat; dog, friendly`,
      );
      // A job without a client still says which job it is.
      assert.match(
        String(byLabel.get('Last week')!.getFirstPropertyValue('description')),
        /^Job: \S+ – Boiler service$/,
      );
    });

    test('a replaced, unlinked, wrong or malformed token is 404; deleting the user ends the link for good', async () => {
      const made = await link(crew.token, crew.id);
      assert.equal(made.status, 200, made.raw);
      const first = made.body.users[0].calendarUrl as string;
      const second = (await link(crew.token, crew.id)).body.users[0].calendarUrl as string;
      assert.equal((await feed(first)).statusCode, 404);
      assert.equal((await feed(second)).statusCode, 200);
      const wrong = second.replace(/(.)\.ics$/, (_m, c: string) => `${c === 'A' ? 'B' : 'A'}.ics`);
      assert.equal((await feed(wrong)).statusCode, 404);
      for (const path of ['/calendar/x.ics', '/calendar/1.abc.ics', `/calendar/${'9'.repeat(30)}.ics`])
        assert.equal((await t.app.inject({ method: 'GET', url: path })).statusCode, 404, path);
      assert.equal((await link(crew.token, crew.id, 'calendarUnlink')).status, 200);
      assert.equal((await feed(second)).statusCode, 404);

      const third = (await link(crew.token, crew.id)).body.users[0].calendarUrl as string;
      assert.equal((await feed(third)).statusCode, 200);
      await call(t.app, a.token, 'PATCH', `/users/${crew.id}`, { users: [{ deleted: true }] });
      assert.equal((await feed(third)).statusCode, 404);
      await call(t.app, a.token, 'PATCH', `/users/${crew.id}`, { users: [{ deleted: false }] });
      assert.equal((await feed(third)).statusCode, 404, 'restoring the user does not revive the old URL');

      const officeUrl = (await link(a.token, office.id)).body.users[0].calendarUrl as string;
      assert.equal((await feed(officeUrl)).statusCode, 200);
      assert.equal((await call(t.app, a.token, 'DELETE', `/users/${office.id}`)).status, 200);
      assert.equal((await feed(officeUrl)).statusCode, 404);
    });

    test('every URL under /calendar/ that is no feed is the same 404, echoing nothing of the token', async () => {
      const url = (await link(a.token, a.adminId)).body.users[0].calendarUrl as string;
      const good = new URL(url).pathname;
      const token = good.slice('/calendar/'.length, -'.ics'.length);
      assert.equal((await feed(url)).statusCode, 200);
      const long = `Zq${'x'.repeat(4998)}`;
      const paths = [
        `/calendar/${long}.ics`,
        `/calendar/${long}`,
        `/calendar/1.${'A'.repeat(120)}.ics`,
        `/calendar/${token}x.ics`,
        `/calendar/${token.slice(0, -1)}.ics`,
        `/calendar/${token}.ics/more`,
        `/calendar/Zq%00%ff%fe.ics`,
        `/calendar/Zq%E0%A4%A.ics`,
        `/calendar/Zq%2F..%2F..%2Fetc.ics`,
        `/calendar/Zq<script>"'.ics`,
        `/calendar/Zq%20%F0%9F%98%80.ics?x=Zq`,
        '/calendar/',
        '/calendar/x.ics',
      ];
      const bodies = new Set<string>();
      for (const path of paths) {
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'] as const) {
          const res = await t.app.inject({ method: method as 'GET', url: path });
          const what = `${method} ${path.slice(0, 60)}`;
          assert.equal(res.statusCode, 404, `${what}: ${res.body.slice(0, 300)}`);
          assert.equal(res.headers.allow, undefined, what);
          assert.ok(!res.body.includes('Zq') && !res.body.includes(token.slice(-20)), `${what}: ${res.body}`);
          assert.ok(res.body.length < 200, what);
          bodies.add(res.body);
        }
      }
      assert.deepEqual(
        [...bodies].map((x) => JSON.parse(x)),
        [{ result: 'error', error: { type: 'client', code: 1031, message: 'Item not found: no such calendar feed' } }],
      );
      // The feed itself still answers, with a query string too, and without `.ics`; only GET serves it.
      assert.equal((await feed(`${url}?x=1`)).statusCode, 200);
      assert.equal((await feed(url.slice(0, -'.ics'.length))).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'POST', url: good })).statusCode, 404);
      // Elsewhere a path that is not percent-encoded UTF-8 is the envelope's 400 (1009), echoing nothing.
      const bad = await call(t.app, a.token, 'GET', '/users/Zq%ff');
      assert.equal(bad.status, 400, bad.raw);
      assert.equal(bad.body.error.code, 1009);
      assert.ok(!bad.raw.includes('Zq'), bad.raw);
    });
  });

  describe(`calendar feeds are rate-limited like the API (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect, { env: { RATE_LIMIT_API: '3' } });

    test('past RATE_LIMIT_API requests a minute on one feed: 429 with Retry-After', async () => {
      const url = (await call(t.app, a.token, 'POST', `/users/${a.adminId}/calendarLink`)).body.users[0]
        .calendarUrl as string;
      const get = () => t.app.inject({ method: 'GET', url: new URL(url).pathname });
      for (let i = 0; i < 3; i++) assert.equal((await get()).statusCode, 200);
      const over = await get();
      assert.equal(over.statusCode, 429);
      assert.ok(Number(over.headers['retry-after']) > 0);
    });
  });
}
