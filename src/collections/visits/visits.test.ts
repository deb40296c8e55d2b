import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DIALECTS,
  addUser,
  assertAtomicBatch,
  assertIsolated,
  call,
  suiteWithTenants,
  errorsOf,
  skipUnless,
} from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

for (const dialect of DIALECTS) {
  describe(`visits (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let jobA: number;
    let jobB: number;
    before(async () => {
      jobA = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'A job' }] })).body.jobs[0].id;
      jobB = (await call(t.app, b.token, 'POST', '/jobs', { jobs: [{ title: 'B job' }] })).body.jobs[0].id;
    });

    const visit = (extra: Record<string, unknown> = {}) => ({
      job: { id: jobA },
      label: 'Inspect',
      startTime: '2030-01-01T09:00:00Z',
      endTime: '2030-01-01T10:00:00Z',
      ...extra,
    });
    const create = (items: unknown[], token = a.token) => call(t.app, token, 'POST', '/visits', { visits: items });
    const patch = (items: unknown[], token = a.token) => call(t.app, token, 'PATCH', '/visits', { visits: items });

    it('creates with defaults (unassigned, scheduled) and returns times in UTC', async () => {
      const res = await create([
        visit({ startTime: '2030-01-01T10:00:00+01:00', endTime: '2030-01-01T11:30:00+01:00' }),
      ]);
      assert.equal(res.status, 200, res.raw);
      const v = res.body.visits[0];
      assert.deepEqual(
        { ...v, created: undefined, modified: undefined },
        {
          id: v.id,
          job: { id: jobA },
          user: null,
          label: 'Inspect',
          notes: null,
          startTime: '2030-01-01T09:00:00.000Z',
          endTime: '2030-01-01T10:30:00.000Z',
          state: 'scheduled',
          eta: null,
          checkInTime: null,
          checkOutTime: null,
          checkInLocation: null,
          checkOutLocation: null,
          arrivalWindowStart: null,
          arrivalWindowEnd: null,
          locked: false,
          account: { id: a.accountId },
          deleted: false,
          customFields: {},
          created: undefined,
          modified: undefined,
        },
      );
      const full = await call(t.app, a.token, 'GET', `/visits/${v.id}?fields=job,[*]`);
      assert.deepEqual(full.body.visits[0].job, { id: jobA, title: 'A job', reference: 'J-000001' });
    });

    it('reads, lists, patches and deletes', async () => {
      const v = (await create([visit({ user: { id: a.adminId }, notes: 'Bring ladder' })])).body.visits[0];
      assert.deepEqual(v.user, { id: a.adminId });
      const p = await patch([{ id: v.id, state: 'onSite', user: null, deleted: true }]);
      assert.equal(p.status, 200, p.raw);
      assert.deepEqual(
        [p.body.visits[0].state, p.body.visits[0].user, p.body.visits[0].deleted],
        ['onSite', null, true],
      );
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${v.id}`)).body.visits[0].notes, 'Bring ladder');
      assert.deepEqual((await call(t.app, a.token, 'DELETE', `/visits/${v.id}`)).body.visits, [{ id: v.id }]);
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${v.id}`)).status, 404);
    });

    it('requires job, label, startTime and endTime, one error each', async () => {
      const res = await create([{ notes: 'x' }]);
      assert.deepEqual(errorsOf(res).sort(), [
        code('required', 'endTime'),
        code('required', 'job'),
        code('required', 'label'),
        code('required', 'startTime'),
      ]);
    });

    it('refuses unknown, read-only and malformed members', async () => {
      const res = await create([
        visit({ startTime: '2030-01-01 09:00', state: 'done', modified: '2030-01-01T00:00:00Z', duration: 5 }),
      ]);
      assert.deepEqual(errorsOf(res).sort(), [
        code('invalid', 'startTime'),
        code('invalid', 'state'),
        code('readOnly', 'modified'),
        code('unknown', 'duration'),
      ]);
    });

    it('wants end after start, also when a PATCH changes only one of them', async () => {
      assert.deepEqual(errorsOf(await create([visit({ endTime: '2030-01-01T09:00:00Z' })])), [
        code('invalid', 'endTime'),
      ]);
      const v = (await create([visit()])).body.visits[0];
      assert.deepEqual(errorsOf(await patch([{ id: v.id, startTime: '2030-01-01T11:00:00+01:00' }])), [
        code('invalid', 'startTime'),
      ]);
      assert.deepEqual(errorsOf(await patch([{ id: v.id, endTime: '2030-01-01T08:59:59Z' }])), [
        code('invalid', 'endTime'),
      ]);
      const ok = await patch([{ id: v.id, endTime: '2030-01-01T12:00:00Z' }]);
      assert.equal(ok.status, 200, ok.raw);
      assert.equal((await patch([{ id: v.id, startTime: '2030-01-01T11:00:00Z' }])).status, 200);
    });

    it('resolves job and user inside the account only', async () => {
      const res = await create([visit({ job: { id: jobB }, user: { id: b.adminId } })]);
      assert.deepEqual(errorsOf(res).sort(), [code('reference', 'job'), code('reference', 'user')]);
      assert.deepEqual(errorsOf(await create([visit({ user: 7 })])), [code('association', 'user')]);
    });

    it('filters, sorts and selects on its fields', async () => {
      await create([
        visit({
          label: 'Early',
          startTime: '2029-01-01T08:00:00Z',
          endTime: '2029-01-01T09:00:00Z',
          state: 'completed',
        }),
        visit({
          label: 'Late',
          startTime: '2029-01-02T08:00:00Z',
          endTime: '2029-01-02T09:00:00Z',
          user: { id: a.adminId },
        }),
      ]);
      let res = await call(
        t.app,
        a.token,
        'GET',
        '/visits?where=startTime<"2029-12-31T00:00:00Z"&sort=-startTime&fields=label,startTime',
      );
      assert.deepEqual(
        res.body.visits.map((v: { label: string }) => v.label),
        ['Late', 'Early'],
      );
      res = await call(
        t.app,
        a.token,
        'GET',
        `/visits?where=user.id=${a.adminId}+and+state="scheduled"&fields=user.firstName`,
      );
      assert.ok(
        res.body.visits.some(
          (v: { user: unknown }) => JSON.stringify(v.user) === JSON.stringify({ id: a.adminId, firstName: 'Ada' }),
        ),
      );
      res = await call(t.app, a.token, 'GET', `/visits?where=job.id=${jobA}+and+label~"earl"&fields=state`);
      assert.deepEqual(
        res.body.visits.map((v: { state: string }) => v.state),
        ['completed'],
      );
    });

    it('applies a batch all or nothing', async () => {
      await assertAtomicBatch(t, a, 'visits', visit(), visit({ label: '' }));
    });

    it("isolates accounts: A cannot see or change B's visits", async () => {
      const v = (
        await create(
          [{ job: { id: jobB }, label: 'B', startTime: '2030-01-01T09:00:00Z', endTime: '2030-01-01T10:00:00Z' }],
          b.token,
        )
      ).body.visits[0];
      await assertIsolated(t, a, b, 'visits', v.id, { label: 'Stolen' });
    });

    it('lets Employees do everything with visits', async () => {
      const emp = await addUser(t, a, 'employee');
      const v = (await create([visit({ user: { id: emp.id } })], emp.token)).body.visits[0];
      assert.equal((await patch([{ id: v.id, state: 'travelling' }], emp.token)).status, 200);
      assert.equal((await call(t.app, emp.token, 'DELETE', `/visits/${v.id}`)).status, 200);
    });

    it('lets a Contractor read and update only their visits, add visits to their jobs, never reassign or delete', async () => {
      const con = await addUser(t, a, 'contractor');
      const other = await addUser(t, a, 'employee');
      const jobs = (
        await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Theirs' }, { title: 'Not theirs' }] })
      ).body.jobs;
      const [mine, notMine] = (
        await create([
          visit({ job: { id: jobs[0].id }, user: { id: con.id } }),
          visit({ job: { id: jobs[0].id }, user: { id: other.id } }),
        ])
      ).body.visits;
      const listed = await call(t.app, con.token, 'GET', '/visits');
      assert.deepEqual(
        listed.body.visits.map((v: { id: number }) => v.id),
        [mine.id],
      );
      assert.equal((await call(t.app, con.token, 'GET', `/visits/${notMine.id}`)).status, 404);
      assert.equal((await patch([{ id: mine.id, state: 'onSite', notes: 'Arrived' }], con.token)).status, 200);
      assert.deepEqual(errorsOf(await patch([{ id: notMine.id, state: 'cancelled' }], con.token)), [
        code('notFound', 'id'),
      ]);
      assert.equal((await patch([{ id: mine.id, user: { id: other.id } }], con.token)).status, 403);
      assert.equal((await patch([{ id: mine.id, job: { id: jobs[1].id } }], con.token)).status, 403);
      assert.equal((await call(t.app, con.token, 'DELETE', `/visits/${mine.id}`)).status, 403);
      // New visits: only for themselves, only on a job already assigned to them.
      const added = await create(
        [visit({ job: { id: jobs[0].id }, user: { id: con.id }, label: 'Follow-up' })],
        con.token,
      );
      assert.equal(added.status, 200, added.raw);
      assert.equal((await create([visit({ job: { id: jobs[0].id }, user: { id: other.id } })], con.token)).status, 403);
      assert.equal((await create([visit({ job: { id: jobs[0].id } })], con.token)).status, 403);
      assert.deepEqual(errorsOf(await create([visit({ job: { id: jobs[1].id }, user: { id: con.id } })], con.token)), [
        code('reference', 'job'),
      ]);
      assert.equal((await call(t.app, con.token, 'GET', `/jobs/${jobs[1].id}`)).status, 404);
    });

    it('nulls the assignee when the user is deleted', async () => {
      const emp = await addUser(t, a, 'employee');
      const v = (await create([visit({ user: { id: emp.id } })])).body.visits[0];
      assert.equal((await call(t.app, a.token, 'DELETE', `/users/${emp.id}`)).status, 200);
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${v.id}`)).body.visits[0].user, null);
    });
  });
}
