import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { DIALECTS, addUser, suiteWithTenants, call, skipUnless } from './helpers.js';
import { redactUrl } from '../src/http/logging.js';

const PLACE = { lat: 35.68, lng: 139.76 };
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
  day,
  start: '09:00',
  end: '17:00',
}));
const DAY = 86_400_000;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const pathOf = (url: string) => new URL(url).pathname;
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
/** The page's slot buttons: their values and labels. */
const buttonsOf = (html: string) =>
  [...html.matchAll(/<button type="submit" name="slot" value="([^"]+)">([^<]+)<\/button>/g)].map((m) => ({
    value: m[1],
    label: m[2],
  }));

/** PRODUCT §18: a job's booking link and its page of slots. */
for (const dialect of DIALECTS) {
  describe(`booking links (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect, { env: { RATE_LIMIT_AUTH: '0' } });
    let crew: { id: number; token: string };
    let contractor: { id: number; token: string };
    before(async () => {
      // Tokyo: +09:00 all year, so a local time is never the UTC one.
      await t.database.db
        .updateTable('accounts')
        .set({ time_zone: 'Asia/Tokyo' })
        .where('id', '=', a.accountId)
        .execute();
      crew = await addUser(t, a, 'employee', { firstName: 'Sam', workingHours: EVERY_DAY, homeLocation: PLACE });
      contractor = await addUser(t, a, 'contractor');
    });

    const open = (path: string, method = 'GET', payload?: string) =>
      t.app.inject({
        method: method as 'GET',
        url: path,
        payload,
        headers: payload === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const newJob = async (extra: Record<string, unknown> = { address: { line1: '1 Chome', location: PLACE } }) => {
      const res = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Aircon service', ...extra }] });
      assert.equal(res.status, 200, res.raw);
      return res.body.jobs[0].id as number;
    };
    const linkOf = async (job: number, token = a.token) => {
      const res = await call(t.app, token, 'POST', `/jobs/${job}/bookingLink`);
      assert.equal(res.status, 200, res.raw);
      return pathOf(res.body.jobs[0].bookingUrl);
    };
    const visitsOf = async (job: number) =>
      (await call(t.app, a.token, 'GET', `/visits?where=job.id=${job}&fields=*`)).body.visits as any[];

    it('bookingUrl is shown once, stored as its hash; the page offers GET /jobs/:id/slots for 14 days', async () => {
      const job = await newJob();
      const res = await call(t.app, a.token, 'POST', `/jobs/${job}/bookingLink`);
      assert.equal(res.status, 200, res.raw);
      const url: string = res.body.jobs[0].bookingUrl;
      assert.match(url, /^http:\/\/127\.0\.0\.1:0\/share\/jobs\/\d+\.[A-Za-z0-9_-]{43}$/);
      const token = url.split('/').pop()!;
      assert.equal(res.body.jobs[0].id, job);
      const read = (await call(t.app, a.token, 'GET', `/jobs/${job}?fields=*`)).body.jobs[0];
      assert.equal(read.bookingUrl, undefined, 'shown only once');
      const row = await t.database.db.selectFrom('jobs').selectAll().where('id', '=', job).executeTakeFirstOrThrow();
      assert.equal(row.share_token_hash, crypto.createHash('sha256').update(token).digest('hex'));
      assert.ok(!JSON.stringify(row).includes(token.split('.')[1]), 'the token itself is nowhere in the row');
      // An Employee too; a Contractor (who may see jobs) 403; another account's job 404.
      const employee = await addUser(t, a, 'employee');
      assert.equal((await call(t.app, employee.token, 'POST', `/jobs/${job}/bookingLink`)).status, 200);
      const refused = await call(t.app, contractor.token, 'POST', `/jobs/${job}/bookingLink`);
      assert.equal(refused.status, 403, refused.raw);
      assert.equal((await call(t.app, contractor.token, 'POST', `/jobs/${job}/unshare`)).status, 403);
      assert.equal((await call(t.app, b.token, 'POST', `/jobs/${job}/bookingLink`)).status, 404);

      const path = await linkOf(job);
      const page = await open(path);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      const csp = String(page.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /form-action 'self'/);
      assert.doesNotMatch(csp, /script-src/, 'no script on the booking page');
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.match(String(page.headers['cache-control']), /no-store/);
      assert.ok(page.body.includes('Alpha'), "the company's name");
      assert.ok(page.body.includes('Aircon service'));
      assert.ok(!page.body.includes('<script'), 'works without JavaScript');
      // Exactly the slots the API offers with its defaults, from now to 14 days ahead.
      const now = t.clock.now;
      const api = await call(
        t.app,
        a.token,
        'GET',
        `/jobs/${job}/slots?from=${new Date(now).toISOString()}&to=${new Date(now + 14 * DAY).toISOString()}`,
      );
      assert.equal(api.status, 200, api.raw);
      assert.ok(api.body.slots.length > 0);
      const buttons = buttonsOf(page.body);
      assert.deepEqual(
        buttons.map((x) => x.value),
        api.body.slots.map((s: any) => `${s.arrivalWindowStart}|${s.user.id}`),
      );
      // Times in the account's zone: Tokyo's 09:00 is 00:00Z.
      const first = buttons.find((x) => x.value.includes('T00:00:00.000Z'))!;
      assert.equal(first.label, '09:00–11:00 · Sam');
      assert.ok(hidden(page.body, 'csrf'));
    });

    it('choosing a slot books it as POST /jobs/:id/book does; CSRF bound to the link; the event has actor null', async () => {
      const job = await newJob();
      const path = await linkOf(job);
      const html = (await open(path)).body;
      const slot = buttonsOf(html).find((x) => x.value.includes('T00:00:00.000Z'))!.value;
      const csrf = hidden(html, 'csrf');
      // No CSRF token, or another link's: 403, nothing booked.
      assert.equal((await open(path, 'POST', form({ slot }))).statusCode, 403);
      const other = await linkOf(await newJob());
      const otherCsrf = hidden((await open(other)).body, 'csrf');
      assert.notEqual(otherCsrf, csrf);
      assert.equal((await open(path, 'POST', form({ csrf: otherCsrf, slot }))).statusCode, 403);
      // Not a slot: refused on the page, with the slots.
      for (const bad of ['', 'tomorrow|1', `${slot.split('|')[0]}|x`, `${slot}|1`, `${slot.split('|')[0]}|99999`]) {
        const res = await open(path, 'POST', form({ csrf, slot: bad }));
        assert.ok(res.statusCode === 422 || res.statusCode === 409, `${bad}: ${res.statusCode}`);
        assert.match(res.body, /class="error"/);
        assert.ok(buttonsOf(res.body).length > 0, 'the slots shown again');
      }
      assert.equal((await visitsOf(job)).length, 0, 'nothing booked');
      const done = await open(path, 'POST', form({ csrf, slot }));
      assert.equal(done.statusCode, 303, done.body.slice(0, 500));
      const location = String(done.headers.location);
      assert.match(location, new RegExp(`^${path}\\?booked=\\d+$`));
      const [visit] = await visitsOf(job);
      const start = slot.split('|')[0];
      assert.equal(visit.id, Number(location.split('=')[1]));
      assert.equal(visit.label, 'Visit');
      assert.deepEqual(visit.user, { id: crew.id });
      assert.equal(visit.arrivalWindowStart, start);
      assert.equal(visit.arrivalWindowEnd, new Date(Date.parse(start) + 120 * 60_000).toISOString());
      assert.equal(visit.startTime, start);
      assert.equal(visit.endTime, new Date(Date.parse(start) + 60 * 60_000).toISOString());
      // The confirmation, in the account's time zone.
      const confirmed = await open(location);
      assert.equal(confirmed.statusCode, 200);
      assert.match(
        confirmed.body,
        /You are booked: we will arrive [A-Z][a-z]+day \d{1,2} [A-Z][a-z]+, 09:00–11:00 GMT\+9/,
      );
      assert.equal(buttonsOf(confirmed.body).length, 0);
      const events = (await call(t.app, a.token, 'GET', `/events?where=collection='visits' and item.id=${visit.id}`))
        .body.events;
      assert.equal(events.length, 1);
      assert.equal(events[0].type, 'visits.created');
      assert.equal(events[0].actor, null);
      // The slot is no longer offered; choosing it again is refused with fresh slots.
      const again = await open(path, 'POST', form({ csrf, slot }));
      assert.equal(again.statusCode, 409);
      assert.match(again.body, /just taken/);
      assert.ok(!buttonsOf(again.body).some((x) => x.value === slot));
      assert.ok(buttonsOf(again.body).length > 0);
      assert.equal((await visitsOf(job)).length, 1);
      // Another job's visit is not confirmed on this page.
      const elsewhere = (await open(`${other}?booked=${visit.id}`)).body;
      assert.ok(!elsewhere.includes('You are booked'));
    });

    it('of two choices racing for one slot, one books and the other sees fresh slots', async () => {
      const job = await newJob();
      const path = await linkOf(job);
      const html = (await open(path)).body;
      const csrf = hidden(html, 'csrf');
      const slot = buttonsOf(html)[0].value;
      const results = await Promise.all([
        open(path, 'POST', form({ csrf, slot })),
        open(path, 'POST', form({ csrf, slot })),
      ]);
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [303, 409]);
      const lost = results.find((r) => r.statusCode === 409)!;
      assert.ok(!buttonsOf(lost.body).some((x) => x.value === slot), 'fresh slots, without the one taken');
      assert.equal((await visitsOf(job)).length, 1);
    });

    it('replaced, unshared, expired and deleted links answer 404; a job with nothing bookable says so', async () => {
      const job = await newJob();
      const first = await linkOf(job);
      const second = await linkOf(job);
      assert.equal((await open(first)).statusCode, 404, 'replaced');
      assert.match((await open(first)).body, /not valid/);
      const csrf = hidden((await open(second)).body, 'csrf');
      assert.equal((await open(first, 'POST', form({ csrf, slot: 'x' }))).statusCode, 404);
      assert.equal((await call(t.app, a.token, 'POST', `/jobs/${job}/unshare`)).status, 200);
      assert.equal((await open(second)).statusCode, 404, 'unshared');
      const third = await linkOf(job);
      assert.equal((await open(`${third}/pdf`)).statusCode, 404, 'a job has no PDF');
      t.clock.now += 61 * DAY;
      assert.equal((await open(third)).statusCode, 404, 'expired after 60 days');
      t.clock.now -= 61 * DAY;
      assert.equal((await open(third)).statusCode, 200);
      // Marked deleted: the link ends and no new one is made (1280); deleted for good: 404.
      const marked = await call(t.app, a.token, 'PATCH', `/jobs/${job}`, { jobs: [{ deleted: true }] });
      assert.equal(marked.status, 200, marked.raw);
      assert.equal((await open(third)).statusCode, 404, 'the job marked deleted');
      const refused = await call(t.app, a.token, 'POST', `/jobs/${job}/bookingLink`);
      assert.equal(refused.status, 422, refused.raw);
      assert.equal(refused.body.code ?? refused.body.error?.code ?? refused.body.errors?.[0]?.code, 1280, refused.raw);
      const gone = await newJob();
      const goneLink = await linkOf(gone);
      assert.equal((await call(t.app, a.token, 'DELETE', `/jobs/${gone}`)).status, 200);
      assert.equal((await open(goneLink)).statusCode, 404, 'the job deleted');
      assert.equal((await call(t.app, a.token, 'POST', `/jobs/${gone}/bookingLink`)).status, 404);
      // Without a place, or with a skill nobody has: a clear message, no slot.
      const nowhere = await open(await linkOf(await newJob({})));
      assert.equal(nowhere.statusCode, 200);
      assert.match(nowhere.body, /cannot be booked online/);
      assert.equal(buttonsOf(nowhere.body).length, 0);
      const skill = (await call(t.app, a.token, 'POST', '/skills', { skills: [{ name: 'Cranes' }] })).body.skills[0].id;
      const nobody = await open(
        await linkOf(await newJob({ requiredSkills: [{ id: skill }], address: { line1: 'x', location: PLACE } })),
      );
      assert.match(nobody.body, /No times are free in the next 14 days/);
      assert.equal(buttonsOf(nobody.body).length, 0);
      assert.equal(redactUrl(`${third}?booked=1`), '/share/jobs/[token]');
    });
  });
}
