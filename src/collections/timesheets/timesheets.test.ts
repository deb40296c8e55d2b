import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, errorsOf, skipUnless } from '../../../test/helpers.js';

const OVERLAP = '1041:startTime';

/** PRODUCT §11: time entries; one user's never overlap, on both databases, under concurrency. */
for (const dialect of DIALECTS) {
  describe(`timesheets (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let jobA: number;
    let jobA2: number;
    let visitA: number;
    let employee: { id: number; token: string };
    let contractor: { id: number; token: string };
    let bUser: number;
    let day = 0;
    before(async () => {
      const jobs = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'One' }, { title: 'Two' }] })).body
        .jobs;
      [jobA, jobA2] = [jobs[0].id, jobs[1].id];
      employee = await addUser(t, a, 'employee');
      contractor = await addUser(t, a, 'contractor');
      visitA = (
        await call(t.app, a.token, 'POST', '/visits', {
          visits: [
            {
              job: { id: jobA },
              user: { id: contractor.id },
              label: 'V',
              startTime: '2030-01-01T09:00:00Z',
              endTime: '2030-01-01T10:00:00Z',
            },
          ],
        })
      ).body.visits[0].id;
      bUser = (await addUser(t, b, 'employee')).id;
    });

    /** A fresh day per test, so tests never overlap each other's entries. */
    const newDay = () => `2031-01-${String(++day).padStart(2, '0')}`;
    const at = (d: string, hm: string) => `${d}T${hm}Z`;
    const post = (items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', '/timesheets', { timesheets: items });
    const patch = (items: unknown[], token = a.token) =>
      call(t.app, token, 'PATCH', '/timesheets', { timesheets: items });
    const entry = (d: string, from: string, to: string | null, extra: Record<string, unknown> = {}) => ({
      user: { id: employee.id },
      startTime: at(d, from),
      endTime: to === null ? null : at(d, to),
      ...extra,
    });

    it('creates with the caller as default user, kind work; duration whole seconds rounded down, null while running', async () => {
      const d = newDay();
      const res = await post([{ startTime: at(d, '08:15:00'), endTime: at(d, '08:45:30.999') }], employee.token);
      assert.equal(res.status, 200, res.raw);
      const e = res.body.timesheets[0];
      assert.deepEqual(e.user, { id: employee.id });
      assert.equal(e.kind, 'work');
      assert.equal(e.duration, 1830);
      assert.equal(e.job, null);
      assert.equal(e.visit, null);
      const running = await post([{ startTime: at(d, '09:00'), kind: 'travel' }], employee.token);
      assert.equal(running.status, 200, running.raw);
      assert.equal(running.body.timesheets[0].endTime, null);
      assert.equal(running.body.timesheets[0].duration, null);
      const ended = await patch([{ id: running.body.timesheets[0].id, endTime: at(d, '09:00:59') }], employee.token);
      assert.equal(ended.status, 200, ended.raw);
      assert.equal(ended.body.timesheets[0].duration, 59);
    });

    it('no overlap per user: touching ends are fine, overlaps and a second running entry fail on startTime', async () => {
      const d = newDay();
      assert.equal((await post([entry(d, '08:00', '09:00')])).status, 200);
      assert.equal((await post([entry(d, '09:00', '10:00')])).status, 200, 'may start when another ends');
      for (const [from, to] of [
        ['08:30', '08:45'],
        ['07:00', '08:01'],
        ['09:59', '11:00'],
        ['07:00', '12:00'],
        ['09:30', null],
      ] as const) {
        const res = await post([entry(d, from, to)]);
        assert.equal(res.status, 422, `${from}-${to}: ${res.raw}`);
        assert.deepEqual(errorsOf(res), [OVERLAP]);
      }
      // Another user's time does not count.
      assert.equal((await post([entry(d, '08:30', '08:45', { user: { id: contractor.id } })])).status, 200);
      // A running entry reaches into the future: nothing later may start, and no second one runs.
      const running = await post([entry(d, '12:00', null)]);
      assert.equal(running.status, 200, running.raw);
      assert.deepEqual(errorsOf(await post([entry('2031-12-31', '08:00', '09:00')])), [OVERLAP]);
      assert.deepEqual(errorsOf(await post([entry(d, '13:00', null)])), [OVERLAP]);
      assert.equal((await post([entry(d, '11:00', '12:00')])).status, 200, 'before the running one is fine');
      const stop = await patch([{ id: running.body.timesheets[0].id, endTime: at(d, '13:00') }]);
      assert.equal(stop.status, 200, stop.raw);
      assert.equal(stop.body.timesheets[0].duration, 3600);
    });

    it('overlaps inside one batch fail, all or nothing; a deleted entry no longer counts; a PATCH into another is refused', async () => {
      const d = newDay();
      const both = await post([entry(d, '08:00', '09:00'), entry(d, '08:30', '09:30')]);
      assert.equal(both.status, 422);
      assert.deepEqual(errorsOf(both), [OVERLAP, OVERLAP]);
      const one = (await post([entry(d, '08:00', '09:00')])).body.timesheets[0];
      const two = (await post([entry(d, '10:00', '11:00')])).body.timesheets[0];
      const moved = await patch([{ id: two.id, startTime: at(d, '08:59') }]);
      assert.deepEqual(errorsOf(moved), [OVERLAP]);
      assert.equal((await patch([{ id: one.id, deleted: true }])).status, 200);
      assert.equal((await patch([{ id: two.id, startTime: at(d, '08:30') }])).status, 200);
      const restore = await patch([{ id: one.id, deleted: false }]);
      assert.deepEqual(errorsOf(restore), [OVERLAP]);
      const listed = await call(
        t.app,
        a.token,
        'GET',
        `/timesheets?where=${encodeURIComponent(`user.id = ${employee.id} and startTime >= "${at(d, '00:00')}" and deleted = false`)}`,
      );
      assert.equal(listed.status, 200, listed.raw);
      assert.equal(listed.body.timesheets.length, 1);
    });

    it('two users writing overlapping entries at the same moment: exactly one succeeds (the race)', async () => {
      for (const running of [false, true]) {
        const d = newDay();
        const n = 12;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            post(
              [entry(d, `08:${String(i).padStart(2, '0')}`, running ? null : '09:30')],
              i % 2 ? a.token : employee.token,
            ),
          ),
        );
        const ok = results.filter((r) => r.status === 200);
        assert.equal(ok.length, 1, results.map((r) => r.raw).join('\n'));
        for (const r of results.filter((x) => x.status !== 200)) assert.deepEqual(errorsOf(r), [OVERLAP], r.raw);
        const stored = await call(
          t.app,
          a.token,
          'GET',
          `/timesheets?where=${encodeURIComponent(`user.id = ${employee.id} and startTime >= "${at(d, '00:00')}"`)}`,
        );
        assert.equal(stored.body.timesheets.length, 1);
        if (running)
          assert.equal((await patch([{ id: ok[0].body.timesheets[0].id, endTime: at(d, '10:00') }])).status, 200);
      }
    });

    it('a visit sent without job gives its job; a visit of another job fails on visit', async () => {
      const d = newDay();
      const res = await post([entry(d, '08:00', '09:00', { visit: { id: visitA } })]);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.timesheets[0].job, { id: jobA });
      const wrong = await post([entry(d, '10:00', '11:00', { visit: { id: visitA }, job: { id: jobA2 } })]);
      assert.deepEqual(errorsOf(wrong), ['1041:visit']);
      const moved = await patch([{ id: res.body.timesheets[0].id, job: { id: jobA2 } }]);
      assert.deepEqual(errorsOf(moved), ['1041:visit']);
    });

    it('roles: Employees and Contractors write only their own (403); Contractors read only their own', async () => {
      const d = newDay();
      const adminEntry = (await post([entry(d, '08:00', '09:00', { user: { id: a.adminId } })])).body.timesheets[0];
      assert.equal((await post([entry(d, '08:00', '09:00', { user: { id: a.adminId } })], employee.token)).status, 403);
      assert.equal(
        (await post([entry(d, '10:00', '11:00', { user: { id: employee.id } })], contractor.token)).status,
        403,
      );
      assert.equal((await patch([{ id: adminEntry.id, notes: 'mine now' }], employee.token)).status, 403);
      const own = await post(
        [{ startTime: at(d, '10:00'), endTime: at(d, '11:00'), visit: { id: visitA } }],
        contractor.token,
      );
      assert.equal(own.status, 200, own.raw);
      const handOver = await patch([{ id: own.body.timesheets[0].id, user: { id: employee.id } }], contractor.token);
      assert.equal(handOver.status, 403);
      const list = await call(t.app, contractor.token, 'GET', '/timesheets?recordsPerPage=1000');
      assert.equal(list.status, 200);
      assert.ok(list.body.timesheets.length > 0);
      assert.ok(list.body.timesheets.every((e: any) => e.user.id === contractor.id));
      assert.equal((await call(t.app, contractor.token, 'GET', `/timesheets/${adminEntry.id}`)).status, 404);
      const all = await call(t.app, employee.token, 'GET', '/timesheets?recordsPerPage=1000');
      assert.ok(
        all.body.timesheets.some((e: any) => e.user.id === a.adminId),
        'Employees read all',
      );
      // A Contractor books time only on jobs they can see.
      const hidden = await post(
        [{ startTime: at(d, '12:00'), endTime: at(d, '13:00'), job: { id: jobA2 } }],
        contractor.token,
      );
      assert.deepEqual(errorsOf(hidden), ['1045:job']);
    });

    it("deleting a job keeps its entries (job and visit become null, an event each); deleting a user removes the user's", async () => {
      const d = newDay();
      const job = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Gone soon' }] })).body.jobs[0].id;
      const visit = (
        await call(t.app, a.token, 'POST', '/visits', {
          visits: [{ job: { id: job }, label: 'V', startTime: at(d, '09:00'), endTime: at(d, '10:00') }],
        })
      ).body.visits[0].id;
      const kept = (await post([entry(d, '08:00', '09:00', { visit: { id: visit } })])).body.timesheets[0];
      assert.deepEqual(kept.job, { id: job });
      const temp = await addUser(t, a, 'employee');
      const theirs = (await post([entry(d, '08:00', '09:00', { user: { id: temp.id } })])).body.timesheets[0];
      assert.equal((await call(t.app, a.token, 'DELETE', `/jobs/${job}`)).status, 200);
      const after = (await call(t.app, a.token, 'GET', `/timesheets/${kept.id}`)).body.timesheets[0];
      assert.equal(after.job, null);
      assert.equal(after.visit, null);
      const events = await call(
        t.app,
        a.token,
        'GET',
        `/events?where=${encodeURIComponent(`collection = "timesheets" and item.id = ${kept.id}`)}&sort=-id`,
      );
      assert.equal(events.status, 200, events.raw);
      assert.equal(events.body.events[0].type, 'timesheets.updated');
      assert.deepEqual(events.body.events[0].changes.job, { old: { id: job }, new: null });
      assert.equal((await call(t.app, a.token, 'DELETE', `/users/${temp.id}`)).status, 200);
      assert.equal((await call(t.app, a.token, 'GET', `/timesheets/${theirs.id}`)).status, 404);
    });

    it('bad input names the field and saves nothing', async () => {
      const d = newDay();
      const cases: [Record<string, unknown>, string][] = [
        [{ startTime: 'yesterday' }, '1041:startTime'],
        [{ startTime: '2031-02-30T25:00:00Z' }, '1041:startTime'],
        [{ startTime: at(d, '09:00'), endTime: at(d, '08:00') }, '1041:endTime'],
        [{ startTime: at(d, '09:00'), endTime: at(d, '09:00') }, '1041:endTime'],
        [{ startTime: at(d, '09:00'), user: { id: bUser } }, '1045:user'],
        [{ startTime: at(d, '09:00'), kind: 'nap' }, '1041:kind'],
        [{ startTime: at(d, '09:00'), duration: 5 }, '1042:duration'],
      ];
      for (const [item, expected] of cases) {
        const res = await post([item]);
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), [expected], JSON.stringify(item));
      }
      const mine = (await post([{ startTime: at(d, '10:00'), endTime: at(d, '11:00') }])).body.timesheets[0];
      assert.deepEqual(errorsOf(await patch([{ id: mine.id, endTime: at(d, '09:00') }])), ['1041:endTime']);
      assert.deepEqual(errorsOf(await patch([{ id: mine.id, startTime: at(d, '12:00') }])), ['1041:startTime']);
      const count = await call(
        t.app,
        a.token,
        'GET',
        `/timesheets?where=${encodeURIComponent(`startTime >= "${at(d, '00:00')}"`)}`,
      );
      assert.equal(count.body.metadata.recordsCount, 1);
    });
  });
}
