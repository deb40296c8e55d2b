import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, errorsOf, skipUnless } from '../../../test/helpers.js';

const JOB_PLACE = { lat: 51.5, lng: -0.1 };
/** About 20 km north: 1802 s at the default 40 km/h. */
const AWAY = { lat: 51.68, lng: -0.1 };
/** Mondays in April 2030 (British Summer Time: 09:00 in London is 08:00Z). */
const MON = ['2030-04-01', '2030-04-08', '2030-04-15', '2030-04-22', '2030-04-29', '2030-05-06', '2030-05-13'];
const day = (date: string) => `from=${date}T00:00:00Z&to=${date}T23:59:00Z`;
const hours = (res: { body: any }, userId?: number) =>
  (res.body.slots as any[])
    .filter((s) => userId === undefined || s.user.id === userId)
    .map((s) => s.arrivalWindowStart.slice(11, 16));

/** PRODUCT §15: GET /jobs/:id/slots and POST /jobs/:id/book. */
for (const dialect of DIALECTS) {
  describe(`jobs slots and book (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let job: number;
    let elsewhere: number;
    let crew: { id: number; token: string };
    let unskilled: { id: number; token: string };
    let contractor: { id: number; token: string };
    before(async () => {
      // The account's zone (PRODUCT §1): working hours are London's.
      await t.database.db
        .updateTable('accounts')
        .set({ time_zone: 'Europe/London' })
        .where('id', '=', a.accountId)
        .execute();
      const gas = (await call(t.app, a.token, 'POST', '/skills', { skills: [{ name: 'Gas' }] })).body.skills[0].id;
      const other = (await call(t.app, a.token, 'POST', '/skills', { skills: [{ name: 'Roofs' }] })).body.skills[0].id;
      const jobs = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: [
          { title: 'Boiler', requiredSkills: [{ id: gas }], address: { line1: '1 High St', location: JOB_PLACE } },
          { title: 'Elsewhere', address: { line1: '2 Far Rd', location: AWAY } },
        ],
      });
      assert.equal(jobs.status, 200, jobs.raw);
      [job, elsewhere] = jobs.body.jobs.map((j: any) => j.id);
      const workingHours = [{ day: 'mon', start: '09:00', end: '17:00' }];
      crew = await addUser(t, a, 'employee', { workingHours, homeLocation: JOB_PLACE, skills: [{ id: gas }] });
      unskilled = await addUser(t, a, 'employee', { workingHours, skills: [{ id: other }] });
      // Skilled, but no working hours: never offered.
      await addUser(t, a, 'employee', { skills: [{ id: gas }] });
      contractor = await addUser(t, a, 'contractor', { workingHours, skills: [{ id: gas }] });
    });

    const slotsOf = (query: string, token = a.token, id = job) =>
      call(t.app, token, 'GET', `/jobs/${id}/slots?${query}`);
    const booking = (date: string, hour: string, extra: Record<string, unknown> = {}) => ({
      slots: [
        {
          arrivalWindowStart: `${date}T${hour}:00:00Z`,
          arrivalWindowEnd: `${date}T${String(Number(hour) + 1).padStart(2, '0')}:00:00Z`,
          user: { id: crew.id },
          duration: 60,
          ...extra,
        },
      ],
    });
    const bookOf = (body: unknown, token = a.token) => call(t.app, token, 'POST', `/jobs/${job}/book`, body);
    const visitsOn = async (date: string) =>
      (
        await call(
          t.app,
          a.token,
          'GET',
          `/visits?where=${encodeURIComponent(`startTime >= '${date}T00:00:00Z' and startTime < '${date}T23:59:00Z'`)}`,
        )
      ).body.visits as any[];

    it("offers windows on the account's local hour, inside working hours, to users with the job's skills", async () => {
      const res = await slotsOf(`${day(MON[0])}&window=60&duration=60`);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.result, 'success');
      // 09:00–17:00 London is 08:00Z–16:00Z: the last window ends an hour before (the visit).
      assert.deepEqual(hours(res, crew.id), ['08:00', '09:00', '10:00', '11:00', '12:00', '13:00', '14:00']);
      // The skilled users with working hours (the Contractor is one), each window by travel then user.
      assert.deepEqual([...new Set(res.body.slots.map((s: any) => s.user.id))], [crew.id, contractor.id]);
      assert.equal(res.body.slots[1].user.id, contractor.id);
      assert.deepEqual(res.body.slots[0], {
        arrivalWindowStart: `${MON[0]}T08:00:00.000Z`,
        arrivalWindowEnd: `${MON[0]}T09:00:00.000Z`,
        user: { id: crew.id },
        travelSeconds: 0,
      });
      assert.deepEqual(res.body.metadata, { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 14 });
      // Defaults: a 120-minute window and a 60-minute visit; paged.
      const paged = await slotsOf(`${day(MON[0])}&recordsPerPage=4&page=2`);
      assert.equal(paged.status, 200, paged.raw);
      assert.deepEqual(hours(paged), ['10:00', '10:00', '11:00', '11:00']);
      assert.equal(paged.body.slots[0].arrivalWindowEnd, `${MON[0]}T12:00:00.000Z`);
      assert.deepEqual(paged.body.metadata, { page: 2, pagesCount: 3, recordsPerPage: 4, recordsCount: 12 });
      // A job without required skills is offered to the unskilled user too.
      const any = await slotsOf(`${day(MON[0])}&window=60`, a.token, elsewhere);
      assert.ok(any.body.slots.some((s: any) => s.user.id === unskilled.id));
    });

    it('leave takes the windows whose visit it would meet', async () => {
      const leave = await call(t.app, a.token, 'POST', '/unavailabilities', {
        unavailabilities: [
          { user: { id: crew.id }, startTime: `${MON[1]}T09:30:00Z`, endTime: `${MON[1]}T10:00:00Z`, reason: 'leave' },
        ],
      });
      assert.equal(leave.status, 200, leave.raw);
      const res = await slotsOf(`${day(MON[1])}&window=60&duration=60`);
      assert.deepEqual(hours(res, crew.id), ['10:00', '11:00', '12:00', '13:00', '14:00']);
    });

    it('an existing visit and the travel to and from it', async () => {
      const v = await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: elsewhere },
            user: { id: crew.id },
            label: 'There',
            startTime: `${MON[2]}T11:00:00Z`,
            endTime: `${MON[2]}T11:20:00Z`,
          },
        ],
      });
      assert.equal(v.status, 200, v.raw);
      const res = await slotsOf(`${day(MON[2])}&window=60&duration=60`);
      // Before: the visit ends by 10:29:58 (1802 s to get there): only 08:00. After: from 11:50:02, so 12:00.
      assert.deepEqual(hours(res, crew.id), ['08:00', '12:00', '13:00', '14:00']);
      // 12:00 comes from the visit (1802 s) and ends at home, the job's own place: the way home from
      // the visit was 1802 s already, so the visit adds nothing.
      const at12 = res.body.slots.find((s: any) => s.arrivalWindowStart.startsWith(`${MON[2]}T12`));
      assert.equal(at12.travelSeconds, 0);
    });

    it('a remembered answer gives way to every change it depends on', async () => {
      // 2030-05-20 is a Monday no other test uses (London summer time: 09:00–17:00 is 08:00–16:00Z).
      // Each change below moves a table the answer is remembered under (visits, users, leave, jobs,
      // skills); asked again, the answer shows it.
      const date = '2030-05-20';
      const crewHours = async () => hours(await slotsOf(`${day(date)}&window=60&duration=60`), crew.id);
      const all = ['08:00', '09:00', '10:00', '11:00', '12:00', '13:00', '14:00'];
      assert.deepEqual(await crewHours(), all);
      assert.deepEqual(await crewHours(), all, 'asked again: the same');
      const leave = await call(t.app, a.token, 'POST', '/unavailabilities', {
        unavailabilities: [{ user: { id: crew.id }, startTime: `${date}T09:00:00Z`, endTime: `${date}T16:00:00Z` }],
      });
      assert.equal(leave.status, 200, leave.raw);
      assert.deepEqual(await crewHours(), []);
      const leaveId = leave.body.unavailabilities[0].id;
      assert.equal((await call(t.app, a.token, 'DELETE', `/unavailabilities/${leaveId}`)).status, 200);
      assert.deepEqual(await crewHours(), all);
      const other = await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: job },
            user: { id: crew.id },
            label: 'V',
            startTime: `${date}T08:00:00Z`,
            endTime: `${date}T13:00:00Z`,
          },
        ],
      });
      assert.equal(other.status, 200, other.raw);
      assert.deepEqual(await crewHours(), ['13:00', '14:00']);
      const otherId = other.body.visits[0].id;
      assert.equal((await call(t.app, a.token, 'DELETE', `/visits/${otherId}`)).status, 200);
      assert.deepEqual(await crewHours(), all);
      const narrower = [{ day: 'mon', start: '09:00', end: '12:00' }];
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/users/${crew.id}`, { users: [{ workingHours: narrower }] })).status,
        200,
      );
      assert.deepEqual(await crewHours(), ['08:00', '09:00']);
      const wide = [{ day: 'mon', start: '09:00', end: '17:00' }];
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/users/${crew.id}`, { users: [{ workingHours: wide }] })).status,
        200,
      );
      assert.deepEqual(await crewHours(), all);
      // A skill the crew lacks, required by the job, then taken off again.
      const extra = (await call(t.app, a.token, 'POST', '/skills', { skills: [{ name: 'Ladders' }] })).body.skills[0]
        .id;
      const jobNow = (await call(t.app, a.token, 'GET', `/jobs/${job}`)).body.jobs[0];
      const needs = (skills: { id: number }[]) =>
        call(t.app, a.token, 'PATCH', `/jobs/${job}`, { jobs: [{ requiredSkills: skills }] });
      assert.equal((await needs([...jobNow.requiredSkills, { id: extra }])).status, 200);
      assert.deepEqual(await crewHours(), []);
      // Deleting the skill drops the requirement: the crew is offered again.
      assert.equal((await call(t.app, a.token, 'DELETE', `/skills/${extra}`)).status, 200);
      assert.deepEqual(await crewHours(), all);
      assert.equal((await needs(jobNow.requiredSkills)).status, 200);
      assert.deepEqual(await crewHours(), all);
    });

    it('every bad parameter is a 400 naming it', async () => {
      const bad: [string, string][] = [
        ['to=2030-04-02T00:00:00Z', 'from'],
        ['from=2030-04-01T00:00:00Z', 'to'],
        ['from=yesterday&to=2030-04-02T00:00:00Z', 'from'],
        ['from=2030-04-01T00:00:00Z&to=2030-04-02', 'to'],
        ['from=2030-04-02T00:00:00Z&to=2030-04-01T00:00:00Z', 'to'],
        ['from=2030-04-01T00:00:00Z&to=2030-05-02T00:00:01Z', 'to'],
        [`${day(MON[0])}&duration=4`, 'duration'],
        [`${day(MON[0])}&duration=1441`, 'duration'],
        [`${day(MON[0])}&duration=abc`, 'duration'],
        [`${day(MON[0])}&window=0`, 'window'],
        [`${day(MON[0])}&window=1441`, 'window'],
        [`${day(MON[0])}&page=0`, 'page'],
        [`${day(MON[0])}&recordsPerPage=1001`, 'recordsPerPage'],
        [`${day(MON[0])}&where=x`, 'where'],
        [`${day(MON[0])}&window=60&window=90`, 'window'],
      ];
      for (const [query, name] of bad) {
        const res = await slotsOf(query);
        assert.equal(res.status, 400, `${query}: ${res.raw}`);
        assert.ok(res.body.error.message.includes(name), `${query}: ${res.body.error.message}`);
      }
      // 31 days exactly is allowed; 5 and 1440 minutes too.
      const ok = await slotsOf('from=2030-04-01T00:00:00Z&to=2030-05-02T00:00:00Z&duration=5&window=1440');
      assert.equal(ok.status, 200, ok.raw);
    });

    it("Contractors 403; another account's job 404; a job without a place 422; GET only", async () => {
      assert.equal((await slotsOf(day(MON[0]), contractor.token)).status, 403);
      assert.equal((await bookOf(booking(MON[3], '08'), contractor.token)).status, 403);
      const theirs = (await call(t.app, b.token, 'POST', '/jobs', { jobs: [{ title: 'Theirs' }] })).body.jobs[0].id;
      assert.equal((await slotsOf(day(MON[0]), a.token, theirs)).status, 404);
      assert.equal((await call(t.app, a.token, 'POST', `/jobs/${theirs}/book`, booking(MON[3], '08'))).status, 404);
      const nowhere = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Nowhere' }] })).body.jobs[0].id;
      const res = await slotsOf(day(MON[0]), a.token, nowhere);
      assert.equal(res.status, 422, res.raw);
      assert.equal(res.body.error.code, 1280);
      assert.match(res.body.error.message, /address\.location/);
      const post = await call(t.app, a.token, 'POST', `/jobs/${job}/slots?${day(MON[0])}`);
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET');
    });

    it('booking creates the visit with the window, its events; the slot is then taken', async () => {
      const before = (await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0]?.id ?? 0;
      const res = await bookOf(booking(MON[3], '08'));
      assert.equal(res.status, 200, res.raw);
      const v = res.body.visits[0];
      assert.equal(v.label, 'Visit');
      assert.deepEqual(v.user, { id: crew.id });
      assert.deepEqual(v.job, { id: job });
      assert.equal(Date.parse(v.arrivalWindowStart), Date.parse(`${MON[3]}T08:00:00Z`));
      assert.equal(Date.parse(v.arrivalWindowEnd), Date.parse(`${MON[3]}T09:00:00Z`));
      assert.equal(Date.parse(v.startTime), Date.parse(`${MON[3]}T08:00:00Z`));
      assert.equal(Date.parse(v.endTime), Date.parse(`${MON[3]}T09:00:00Z`));
      const events = (await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=20')).body.events.filter(
        (e: any) => e.id > before,
      );
      assert.deepEqual(
        events.map((e: any) => e.type),
        ['visits.created'],
      );
      // The promised window and the visit after it are taken (the crew may arrive at 09:00, stay to 10:00).
      const res2 = await slotsOf(`${day(MON[3])}&window=60&duration=60`);
      assert.deepEqual(hours(res2, crew.id), ['10:00', '11:00', '12:00', '13:00', '14:00']);
      // The same slot again: 422, nothing written.
      const again = await bookOf(booking(MON[3], '08'));
      assert.equal(again.status, 422, again.raw);
      assert.equal(again.body.error.code, 1280);
      assert.equal((await visitsOn(MON[3])).length, 1);
    });

    it('a window not offered (not on the hour, outside hours, a user without the skills) is 422, nothing written', async () => {
      for (const body of [
        booking(MON[4], '08', { arrivalWindowStart: `${MON[4]}T08:30:00Z`, arrivalWindowEnd: `${MON[4]}T09:30:00Z` }),
        booking(MON[4], '07'),
        booking(MON[4], '08', { user: { id: unskilled.id } }),
        booking(MON[4], '08', { user: { id: a.adminId } }),
      ]) {
        const res = await bookOf(body);
        assert.equal(res.status, 422, res.raw);
        assert.equal(res.body.error.code, 1280, res.raw);
      }
      assert.equal((await visitsOn(MON[4])).length, 0);
    });

    it('every bad member of the body is a failure naming it', async () => {
      const cases: [unknown, string[]][] = [
        [
          { slots: [{ arrivalWindowEnd: `${MON[4]}T09:00:00Z`, user: { id: crew.id } }] },
          ['1040:slots[0].arrivalWindowStart'],
        ],
        [booking(MON[4], '08', { arrivalWindowEnd: 'soon' }), ['1041:slots[0].arrivalWindowEnd']],
        [booking(MON[4], '08', { arrivalWindowEnd: `${MON[4]}T08:04:00Z` }), ['1041:slots[0].arrivalWindowEnd']],
        [booking(MON[4], '08', { user: 5 }), ['1041:slots[0].user']],
        [booking(MON[4], '08', { user: undefined }), ['1040:slots[0].user']],
        [booking(MON[4], '08', { duration: 4 }), ['1041:slots[0].duration']],
        [booking(MON[4], '08', { duration: '60' }), ['1041:slots[0].duration']],
        [booking(MON[4], '08', { colour: 'red' }), ['1043:slots[0].colour']],
      ];
      for (const [body, errors] of cases) {
        const res = await bookOf(JSON.parse(JSON.stringify(body)));
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), errors, res.raw);
      }
      const two = booking(MON[4], '08');
      two.slots.push(two.slots[0]);
      for (const body of [two, { slots: [] }, { visits: [] }, []]) {
        const res = await bookOf(body);
        assert.equal(res.status, 422, res.raw);
        assert.ok([1247, 1248].includes(res.body.error.code), res.raw);
      }
      assert.equal((await visitsOn(MON[4])).length, 0);
    });

    it('a booking repeated with its Idempotency-Key answers the first answer again, one visit', async () => {
      const key = { 'idempotency-key': `book-${dialect}` };
      const body = booking(MON[6], '12');
      const first = await call(t.app, a.token, 'POST', `/jobs/${job}/book`, body, key);
      assert.equal(first.status, 200, first.raw);
      const again = await call(t.app, a.token, 'POST', `/jobs/${job}/book`, body, key);
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.body.visits[0].id, first.body.visits[0].id);
      assert.equal((await visitsOn(MON[6])).length, 1);
    });

    it('two bookings racing for one slot: exactly one succeeds, one visit written', async () => {
      const [x, y] = await Promise.all([bookOf(booking(MON[5], '10')), bookOf(booking(MON[5], '10'))]);
      assert.deepEqual([x.status, y.status].sort(), [200, 422], `${x.raw} ${y.raw}`);
      assert.equal((x.status === 422 ? x : y).body.error.code, 1280);
      assert.equal((await visitsOn(MON[5])).length, 1);
    });
  });
}
