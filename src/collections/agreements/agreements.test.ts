import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';
import { sqliteFile } from '../../config.js';
import { connect } from '../../db/index.js';
import { createServices } from '../../services.js';
import { rollAgreements } from './roll.js';

/** PRODUCT §16: service agreements, their occurrences as jobs and visits, rewrites on change, cancel. */
const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;
const q = (s: string) => encodeURIComponent(s);

for (const dialect of DIALECTS) {
  describe(`agreements (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let token: string;
    let client: number;
    let otherClient: number;
    let site: number;
    let otherSite: number;
    let asset: number;
    let otherAsset: number;
    let skill: number;
    // Friday 20 March 2026, 12:00 in Berlin: the clocks go forward on Sunday 29 March.
    const NOW = Date.parse('2026-03-20T11:00:00Z');
    before(async () => {
      t.clock.now = NOW;
      token = await a.tokenFor(a.adminId);
      await t.database.db
        .updateTable('accounts')
        .set({ time_zone: 'Europe/Berlin' })
        .where('id', '=', a.accountId)
        .execute();
      [client, otherClient] = (await post('clients', [{ name: 'Acme' }, { name: 'Other' }])).body.clients.map(
        (c: { id: number }) => c.id,
      );
      [site, otherSite] = (
        await post('sites', [
          { client: { id: client }, name: 'HQ', address: { city: 'Berlin' } },
          { client: { id: otherClient }, name: 'Away' },
        ])
      ).body.sites.map((s: { id: number }) => s.id);
      [asset, otherAsset] = (
        await post('assets', [
          { site: { id: site }, name: 'Boiler' },
          { site: { id: otherSite }, name: 'Elsewhere' },
        ])
      ).body.assets.map((x: { id: number }) => x.id);
      skill = (await post('skills', [{ name: 'Gas' }])).body.skills[0].id;
    });
    const post = (col: string, items: unknown[], tok = token) => call(t.app, tok, 'POST', `/${col}`, { [col]: items });
    const patch = (col: string, items: unknown[], tok = token) =>
      call(t.app, tok, 'PATCH', `/${col}`, { [col]: items });
    const get = (url: string, tok = token) => call(t.app, tok, 'GET', url);
    const base = () => ({
      client: { id: client },
      site: { id: site },
      name: 'Boiler care',
      jobTitle: 'Boiler service',
      startDate: '2026-03-20',
      recurrence: 'FREQ=WEEKLY;BYDAY=SU',
      horizonDays: 14,
    });
    const jobsOf = async (id: number, extra = '') =>
      (await get(`/jobs?where=${q(`agreement.id = ${id}${extra}`)}&sort=occurrence&recordsPerPage=1000&fields=*`)).body
        .jobs as any[];
    const visitsOf = async (jobIds: number[]) => {
      if (!jobIds.length) return [];
      const res = await get(
        `/visits?where=${q(jobIds.map((j) => `job.id = ${j}`).join(' or '))}&sort=startTime&fields=*`,
      );
      assert.equal(res.status, 200, res.raw);
      return res.body.visits as any[];
    };

    it('every member validated, each failure naming it; nothing partial', async () => {
      const bad: [Record<string, unknown>, string][] = [
        [{ client: undefined }, code('required', 'client')],
        [{ name: undefined }, code('required', 'name')],
        [{ jobTitle: '' }, code('invalid', 'jobTitle')],
        [{ startDate: '2026-02-30' }, code('invalid', 'startDate')],
        [{ startDate: '1969-12-31' }, code('invalid', 'startDate')],
        [{ endDate: '2026-03-19' }, code('invalid', 'endDate')],
        [{ recurrence: undefined }, code('required', 'recurrence')],
        [{ recurrence: 'FREQ=HOURLY' }, code('invalid', 'recurrence')],
        [{ recurrence: 'FREQ=WEEKLY;BYDAY=1MO' }, code('invalid', 'recurrence')],
        [{ recurrence: 'FREQ=DAILY;BYHOUR=9' }, code('invalid', 'recurrence')],
        [{ recurrence: 'FREQ=DAILY;UNTIL=20260101T000000Z' }, code('invalid', 'recurrence')],
        [{ skipDates: ['2026-02-30'] }, code('invalid', 'skipDates')],
        [{ skipDates: ['2026-03-22', '2026-03-22'] }, code('invalid', 'skipDates')],
        [{ skipDates: '2026-03-22' }, code('invalid', 'skipDates')],
        [{ visitTime: '9:00' }, code('invalid', 'visitTime')],
        [{ visitTime: '24:00' }, code('invalid', 'visitTime')],
        [{ visitMinutes: 4 }, code('invalid', 'visitMinutes')],
        [{ visitMinutes: 1441 }, code('invalid', 'visitMinutes')],
        [{ horizonDays: 6 }, code('invalid', 'horizonDays')],
        [{ horizonDays: 401 }, code('invalid', 'horizonDays')],
        [{ price: 1e10 }, code('invalid', 'price')],
        [{ price: 10.001 }, code('invalid', 'price')],
        [{ billing: 'weekly', price: 10 }, code('invalid', 'billing')],
        [{ billing: 'monthly' }, code('invalid', 'price')],
        [{ billing: 'perVisit', price: null }, code('invalid', 'price')],
        [{ site: { id: otherSite } }, code('invalid', 'site')],
        [{ assets: [{ id: otherAsset }] }, code('invalid', 'assets')],
        [{ site: null, assets: [{ id: asset }] }, code('invalid', 'assets')],
        [{ state: 'ended' }, code('readOnly', 'state')],
        [{ user: { id: 999999 } }, code('reference', 'user')],
      ];
      for (const [change, want] of bad) {
        const item: Record<string, unknown> = { ...base(), ...change };
        for (const k of Object.keys(item)) if (item[k] === undefined) delete item[k];
        const res = await post('agreements', [item]);
        assert.equal(res.status, 422, `${JSON.stringify(change)}: ${res.raw}`);
        assert.deepEqual(errorsOf(res), [want], JSON.stringify(change));
      }
      // A batch whose second agreement fails writes neither, nor any job.
      const before = (await get('/jobs?recordsPerPage=1')).body.metadata.recordsCount;
      const mixed = await post('agreements', [base(), { ...base(), recurrence: 'FREQ=SECONDLY' }]);
      assert.equal(mixed.status, 422);
      assert.equal((await get('/jobs?recordsPerPage=1')).body.metadata.recordsCount, before);
      assert.equal((await get('/agreements')).body.agreements.length, 0);
      // Another account cannot name our client.
      assert.deepEqual(errorsOf(await post('agreements', [base()], b.token)), [
        code('reference', 'client'),
        code('reference', 'site'),
      ]);
    });

    it('occurrences: one job and visit per date in the horizon, at visitTime local across the DST change', async () => {
      const res = await post('agreements', [
        {
          ...base(),
          recurrence: 'FREQ=WEEKLY;BYDAY=SA,SU',
          startDate: '2026-03-14',
          jobDescription: 'Check the flue',
          requiredSkills: [{ id: skill }],
          assets: [{ id: asset }],
          user: { id: a.adminId },
          visitMinutes: 90,
        },
      ]);
      assert.equal(res.status, 200, res.raw);
      const ag = res.body.agreements[0];
      assert.equal(ag.state, 'active');
      assert.equal(ag.visitTime, '09:00');
      assert.deepEqual(ag.skipDates, []);
      const jobs = await jobsOf(ag.id);
      // From today (20 March; the start is past) to today + 14 days (3 April).
      assert.deepEqual(
        jobs.map((j) => j.occurrence),
        ['2026-03-21', '2026-03-22', '2026-03-28', '2026-03-29'],
      );
      for (const j of jobs) {
        assert.deepEqual(j.agreement, { id: ag.id });
        assert.equal(j.title, 'Boiler service');
        assert.equal(j.description, 'Check the flue');
        assert.deepEqual(j.client, { id: client });
        assert.deepEqual(j.site, { id: site });
        assert.deepEqual(j.requiredSkills, [{ id: skill }]);
        assert.deepEqual(j.assets, [{ id: asset }]);
        assert.equal(j.address.city, 'Berlin');
        assert.match(j.reference, /^J-\d{6}$/);
      }
      const visits = await visitsOf(jobs.map((j) => j.id));
      assert.deepEqual(
        visits.map((v) => [v.startTime, v.endTime]),
        [
          ['2026-03-21T08:00:00.000Z', '2026-03-21T09:30:00.000Z'],
          ['2026-03-22T08:00:00.000Z', '2026-03-22T09:30:00.000Z'],
          ['2026-03-28T08:00:00.000Z', '2026-03-28T09:30:00.000Z'],
          ['2026-03-29T07:00:00.000Z', '2026-03-29T08:30:00.000Z'],
        ].map(([s, e]) => [new Date(s).toISOString(), new Date(e).toISOString()]),
      );
      for (const v of visits) {
        assert.equal(v.label, 'Boiler care');
        assert.deepEqual(v.user, { id: a.adminId });
        assert.equal(v.state, 'scheduled');
      }
      // Read-only on jobs.
      assert.deepEqual(errorsOf(await patch('jobs', [{ id: jobs[0].id, occurrence: '2026-01-01' }])), [
        code('readOnly', 'occurrence'),
      ]);
      assert.deepEqual(errorsOf(await patch('jobs', [{ id: jobs[0].id, agreement: null }])), [
        code('readOnly', 'agreement'),
      ]);
      // Events: the jobs and visits were made with the agreement.
      const events = (await get('/events?sort=-id&recordsPerPage=100')).body.events as any[];
      assert.ok(
        events.some((e) => e.collection === 'jobs' && e.item?.id === jobs[0].id),
        JSON.stringify(events[0]),
      );
    });

    it('a change rewrites the untouched future occurrences only; skipDates drop and bring back dates', async () => {
      const ag = (await post('agreements', [{ ...base(), recurrence: 'FREQ=DAILY', horizonDays: 7 }])).body
        .agreements[0];
      let jobs = await jobsOf(ag.id);
      assert.equal(jobs.length, 8, '20 to 27 March');
      // Someone changes one job; another visit is checked in.
      assert.equal((await patch('jobs', [{ id: jobs[1].id, priority: 'high' }])).status, 200);
      const [v2] = await visitsOf([jobs[2].id]);
      assert.equal(
        (await call(t.app, token, 'PATCH', `/visits/${v2.id}`, { visits: [{ user: { id: a.adminId } }] })).status,
        200,
      );
      assert.equal((await call(t.app, token, 'POST', `/visits/${v2.id}/checkIn`)).status, 200);
      const touched = [jobs[1].id, jobs[2].id];
      const res = await patch('agreements', [
        { id: ag.id, visitTime: '14:30', jobTitle: 'New title', skipDates: ['2026-03-25'] },
      ]);
      assert.equal(res.status, 200, res.raw);
      jobs = await jobsOf(ag.id);
      const live = jobs.filter((j) => !j.deleted);
      assert.deepEqual(
        live.map((j) => j.occurrence),
        ['2026-03-20', '2026-03-21', '2026-03-22', '2026-03-23', '2026-03-24', '2026-03-26', '2026-03-27'],
      );
      assert.equal(jobs.find((j) => j.occurrence === '2026-03-25').deleted, true);
      for (const j of live)
        assert.equal(j.title, touched.includes(j.id) ? 'Boiler service' : 'New title', j.occurrence);
      const visits = await visitsOf(live.map((j) => j.id));
      for (const v of visits) {
        const job = live.find((j) => j.id === v.job.id);
        const hour = new Date(v.startTime).getUTCHours();
        assert.equal(hour, touched.includes(job.id) ? 8 : 13, job.occurrence);
      }
      // Bringing the date back revives its job; a longer horizon adds dates.
      assert.equal((await patch('agreements', [{ id: ag.id, skipDates: [], horizonDays: 9 }])).status, 200);
      jobs = await jobsOf(ag.id);
      assert.deepEqual(
        jobs.filter((j) => !j.deleted).map((j) => j.occurrence),
        [
          '2026-03-20',
          '2026-03-21',
          '2026-03-22',
          '2026-03-23',
          '2026-03-24',
          '2026-03-25',
          '2026-03-26',
          '2026-03-27',
          '2026-03-28',
          '2026-03-29',
        ],
      );
      // References are the account's J- numbers, distinct.
      const refs = jobs.map((j) => j.reference);
      assert.equal(new Set(refs).size, refs.length);
      // A PATCH that changes nothing of the occurrences rewrites nothing.
      const stamp = jobs.map((j) => j.modified);
      assert.equal((await patch('agreements', [{ id: ag.id, price: 25 }])).status, 200);
      assert.deepEqual(
        (await jobsOf(ag.id)).map((j) => j.modified),
        stamp,
      );
    });

    it('cancel: cancelled, untouched future occurrences deleted; a second cancel and a PATCH making occurrences are 422', async () => {
      const ag = (await post('agreements', [{ ...base(), recurrence: 'FREQ=DAILY', horizonDays: 7 }])).body
        .agreements[0];
      let jobs = await jobsOf(ag.id);
      assert.equal((await patch('jobs', [{ id: jobs[3].id, priority: 'urgent' }])).status, 200);
      const res = await call(t.app, token, 'POST', `/agreements/${ag.id}/cancel`);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.agreements[0].state, 'cancelled');
      jobs = await jobsOf(ag.id);
      assert.deepEqual(
        jobs.filter((j) => !j.deleted).map((j) => j.id),
        [jobs[3].id],
      );
      const visits = await visitsOf(jobs.map((j) => j.id));
      assert.equal(visits.filter((v) => !v.deleted).length, 1);
      const again = await call(t.app, token, 'POST', `/agreements/${ag.id}/cancel`);
      assert.equal(again.status, 422, again.raw);
      assert.equal(again.body.error.code, 1280);
      const refused = await patch('agreements', [{ id: ag.id, recurrence: 'FREQ=WEEKLY' }]);
      assert.equal(refused.status, 422, refused.raw);
      assert.equal((await get(`/agreements/${ag.id}`)).body.agreements[0].recurrence, 'FREQ=DAILY');
      assert.equal((await call(t.app, token, 'POST', `/agreements/999999/cancel`)).status, 404);
    });

    it('a logically deleted agreement takes its untouched future occurrences with it', async () => {
      const ag = (await post('agreements', [{ ...base(), recurrence: 'FREQ=DAILY', horizonDays: 7 }])).body
        .agreements[0];
      const jobs = await jobsOf(ag.id);
      assert.equal((await patch('jobs', [{ id: jobs[0].id, title: 'Kept' }])).status, 200);
      assert.equal((await patch('agreements', [{ id: ag.id, deleted: true }])).status, 200);
      assert.deepEqual(
        (await jobsOf(ag.id)).filter((j) => !j.deleted).map((j) => j.title),
        ['Kept'],
      );
    });

    it('state ended: past endDate or the rule’s last date; an ended agreement cannot be cancelled', async () => {
      const made = await post('agreements', [
        { ...base(), startDate: '2026-01-01', recurrence: 'FREQ=WEEKLY;COUNT=3' },
        { ...base(), startDate: '2026-01-01', endDate: '2026-02-01', recurrence: 'FREQ=DAILY' },
        { ...base(), startDate: '2026-01-01', recurrence: 'FREQ=WEEKLY;UNTIL=20260401' },
      ]);
      assert.equal(made.status, 200, made.raw);
      assert.deepEqual(
        made.body.agreements.map((x: { state: string }) => x.state),
        ['ended', 'ended', 'active'],
      );
      assert.equal((await jobsOf(made.body.agreements[0].id)).length, 0);
      // Thursdays from today to UNTIL (1 April): 26 March only.
      assert.deepEqual(
        (await jobsOf(made.body.agreements[2].id)).map((j) => j.occurrence),
        ['2026-03-26'],
      );
      const res = await call(t.app, token, 'POST', `/agreements/${made.body.agreements[0].id}/cancel`);
      assert.equal(res.status, 422, res.raw);
    });

    it('the daily roll: one job per agreement and date whatever runs it at once (two pools of one database); events with actor null', async () => {
      const ag = (await post('agreements', [{ ...base(), recurrence: 'FREQ=DAILY', horizonDays: 7 }])).body
        .agreements[0];
      assert.equal((await jobsOf(ag.id)).length, 8);
      // PostgreSQL: another process's services on the same database (its own pool). SQLite's writers
      // are serial (a connection's transaction holds the thread): the same services, at once.
      const otherDb =
        dialect === 'postgres'
          ? await connect({ databaseUrl: t.config.databaseUrl, sqliteFile: sqliteFile(t.config), poolSize: 5 })
          : undefined;
      const other = otherDb ? createServices(t.config, otherDb) : t.services;
      try {
        assert.equal(await rollAgreements(t.services, () => t.clock.now), 0, 'nothing behind today');
        t.clock.now = NOW + 3 * 86_400_000;
        token = await a.tokenFor(a.adminId);
        const clock = () => t.clock.now;
        const rolled = await Promise.all([
          rollAgreements(t.services, clock),
          rollAgreements(other, clock),
          rollAgreements(t.services, clock),
          rollAgreements(other, clock),
        ]);
        assert.ok(rolled.reduce((x, y) => x + y, 0) >= 1, JSON.stringify(rolled));
        const jobs = await jobsOf(ag.id);
        const dates = jobs.map((j) => j.occurrence);
        assert.equal(new Set(dates).size, dates.length, 'one job per date');
        // The past ones stay; the horizon now ends on 30 March.
        assert.deepEqual(
          dates,
          Array.from({ length: 11 }, (_, k) => `2026-03-${String(20 + k).padStart(2, '0')}`),
        );
        assert.equal((await visitsOf(jobs.map((j) => j.id))).length, 11, 'one visit each');
        const made = jobs.slice(8).map((j) => j.id);
        const events = (await get(`/events?where=${q('collection = "jobs"')}&sort=-id&recordsPerPage=100&fields=*`))
          .body.events as any[];
        const mine = events.filter((e) => made.includes(e.item.id));
        assert.equal(mine.length, 3, JSON.stringify(events.slice(0, 3)));
        for (const e of mine) {
          assert.equal(e.actor, null);
          assert.equal(e.clientId, null);
        }
        // Done for today, in every process.
        assert.deepEqual(await Promise.all([rollAgreements(t.services, clock), rollAgreements(other, clock)]), [0, 0]);
      } finally {
        t.clock.now = NOW;
        token = await a.tokenFor(a.adminId);
        await otherDb?.close();
      }
    });

    it('Contractors: agreements 403; the generated visits assigned to them are theirs to see', async () => {
      const con = await addUser(t, a, 'contractor');
      const conToken = await a.tokenFor(con.id);
      assert.equal((await get('/agreements', conToken)).status, 403);
      assert.equal((await post('agreements', [base()], conToken)).status, 403);
      const ag = (await post('agreements', [{ ...base(), user: { id: con.id }, recurrence: 'FREQ=WEEKLY;BYDAY=MO' }]))
        .body.agreements[0];
      assert.equal((await call(t.app, conToken, 'POST', `/agreements/${ag.id}/cancel`)).status, 403);
      const mine = (await get('/jobs?recordsPerPage=1000', conToken)).body.jobs as any[];
      const theirs = await jobsOf(ag.id);
      assert.ok(theirs.length >= 2);
      assert.deepEqual(mine.map((j) => j.id).sort(), theirs.map((j) => j.id).sort());
      // The Employee writes agreements, as jobs.
      const emp = await addUser(t, a, 'employee');
      assert.equal((await post('agreements', [base()], await a.tokenFor(emp.id))).status, 200);
    });
  });
}
