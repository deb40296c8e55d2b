import { describe, it } from 'node:test';
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
  type Tenant,
} from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;
const visit = (job: number, user: number | null) => ({
  job: { id: job },
  user: user && { id: user },
  label: 'Visit',
  startTime: '2030-01-01T09:00:00Z',
  endTime: '2030-01-01T10:00:00Z',
});

for (const dialect of DIALECTS) {
  describe(`jobs (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const create = (items: unknown[], token = a.token) => call(t.app, token, 'POST', '/jobs', { jobs: items });
    const statusId = async (tenant: Tenant, label: string) =>
      (await call(t.app, tenant.token, 'GET', `/statuses?where=label="${label}"`)).body.statuses[0].id as number;

    it('creates with defaults: generated reference, default status, normal priority, createdBy the caller', async () => {
      const res = await create([{ title: 'Boiler service' }]);
      assert.equal(res.status, 200, res.raw);
      const j = res.body.jobs[0];
      assert.deepEqual(
        { ...j, created: undefined, modified: undefined },
        {
          id: j.id,
          title: 'Boiler service',
          reference: 'J-000001',
          description: null,
          client: null,
          site: null,
          status: { id: await statusId(a, 'New') },
          priority: 'normal',
          orderNumber: null,
          address: {},
          dueDate: null,
          createdBy: { id: a.adminId },
          requiredSkills: [],
          agreement: null,
          occurrence: null,
          account: { id: a.accountId },
          deleted: false,
          customFields: {},
          created: undefined,
          modified: undefined,
        },
      );
      const full = await call(t.app, a.token, 'GET', `/jobs/${j.id}?fields=status,createdBy,[*]`);
      assert.deepEqual(full.body.jobs[0].status, {
        id: await statusId(a, 'New'),
        label: 'New',
        colour: '#3B82F6',
        group: 'new',
        isDefault: true,
      });
      assert.deepEqual(full.body.jobs[0].createdBy, { id: a.adminId, firstName: 'Ada', lastName: 'Admin' });
    });

    it('reads, lists, patches and deletes; deleting a job deletes its visits', async () => {
      const client = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Acme Client' }] })).body
        .clients[0];
      const j = (
        await create([
          {
            title: 'Roof',
            client: { id: client.id },
            priority: 'urgent',
            dueDate: '2030-05-01',
            address: { city: 'Hull' },
          },
        ])
      ).body.jobs[0];
      assert.equal(j.client.id, client.id);
      assert.equal(j.dueDate, '2030-05-01');
      const v = await call(t.app, a.token, 'POST', '/visits', { visits: [visit(j.id, null)] });
      assert.equal(v.status, 200, v.raw);
      const p = await call(t.app, a.token, 'PATCH', '/jobs', {
        jobs: [
          { id: j.id, status: { id: await statusId(a, 'On hold') }, client: null, orderNumber: 'PO-9', deleted: true },
        ],
      });
      assert.equal(p.status, 200, p.raw);
      assert.deepEqual(
        [p.body.jobs[0].client, p.body.jobs[0].orderNumber, p.body.jobs[0].deleted],
        [null, 'PO-9', true],
      );
      const d = await call(t.app, a.token, 'DELETE', `/jobs/${j.id}`);
      assert.deepEqual(d.body.jobs, [{ id: j.id }]);
      assert.equal((await call(t.app, a.token, 'GET', `/jobs/${j.id}`)).status, 404);
      assert.equal((await call(t.app, a.token, 'GET', `/visits/${v.body.visits[0].id}`)).status, 404);
    });

    it('requires title; refuses unknown, read-only and malformed members', async () => {
      assert.deepEqual(errorsOf(await create([{ priority: 'low' }])), [code('required', 'title')]);
      const res = await create([
        { title: 'X', createdBy: { id: a.adminId }, priority: 'asap', dueDate: '2030-02-30', colour: '#000000' },
      ]);
      assert.deepEqual(
        errorsOf(res).sort(),
        [
          code('invalid', 'dueDate'),
          code('invalid', 'priority'),
          code('readOnly', 'createdBy'),
          code('unknown', 'colour'),
        ].sort(),
      );
      assert.deepEqual(
        errorsOf(await create([{ title: 'X', dueDate: '2030-02-01T10:00:00Z', status: 3 }])).sort(),
        [code('association', 'status'), code('invalid', 'dueDate')].sort(),
      );
    });

    it('keeps reference unique in the account and skips references used by hand', async () => {
      const given = await create([
        { title: 'Manual', reference: 'J-900000' },
        { title: 'Next', reference: 'ABC' },
      ]);
      assert.equal(given.status, 200, given.raw);
      assert.deepEqual(errorsOf(await create([{ title: 'Dup', reference: 'ABC' }])), [code('unique', 'reference')]);
      assert.deepEqual(
        errorsOf(
          await create([
            { title: 'D1', reference: 'Q' },
            { title: 'D2', reference: 'Q' },
          ]),
        ),
        [code('duplicate', 'reference')],
      );
      assert.equal(
        (await call(t.app, b.token, 'POST', '/jobs', { jobs: [{ title: 'B', reference: 'ABC' }] })).status,
        200,
      );
      const generated = (await create([{ title: 'Auto' }])).body.jobs[0].reference;
      const taken = `J-${String(Number(generated.slice(2)) + 1).padStart(6, '0')}`;
      assert.equal((await create([{ title: 'Squatter', reference: taken }])).status, 200);
      const after = (await create([{ title: 'Auto 2' }])).body.jobs[0].reference;
      assert.equal(after, `J-${String(Number(generated.slice(2)) + 2).padStart(6, '0')}`);
    });

    it('generates distinct references under 20 concurrent creates', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => create([{ title: `Parallel ${i}` }])));
      assert.ok(
        results.every((r) => r.status === 200),
        results.map((r) => r.raw).join('\n'),
      );
      const refs = results.map((r) => r.body.jobs[0].reference as string);
      assert.equal(new Set(refs).size, 20);
      assert.ok(refs.every((r) => /^J-\d{6}$/.test(r)));
    });

    it('resolves client and status inside the account only; deleted ones cannot be referenced', async () => {
      const bClient = (await call(t.app, b.token, 'POST', '/clients', { clients: [{ name: 'B' }] })).body.clients[0].id;
      const res = await create([{ title: 'X', client: { id: bClient }, status: { id: await statusId(b, 'New') } }]);
      assert.deepEqual(errorsOf(res).sort(), [code('reference', 'client'), code('reference', 'status')]);
      const gone = (
        await call(t.app, a.token, 'POST', '/statuses', { statuses: [{ label: 'Retired', deleted: true }] })
      ).body.statuses[0].id;
      assert.deepEqual(errorsOf(await create([{ title: 'Y', status: { id: gone } }])), [code('reference', 'status')]);
    });

    it('filters, sorts and selects on its fields', async () => {
      await create([
        { title: 'Filter low', priority: 'low', dueDate: '2031-01-01', orderNumber: 'F-1' },
        {
          title: 'Filter high',
          priority: 'high',
          dueDate: '2031-06-01',
          orderNumber: 'F-2',
          status: { id: await statusId(a, 'Completed') },
        },
      ]);
      let res = await call(
        t.app,
        a.token,
        'GET',
        '/jobs?where=orderNumber~"f-"+and+dueDate>="2031-01-01"&sort=-dueDate&fields=title,priority',
      );
      assert.deepEqual(
        res.body.jobs.map((j: Record<string, unknown>) => [j.title, j.priority]),
        [
          ['Filter high', 'high'],
          ['Filter low', 'low'],
        ],
      );
      res = await call(
        t.app,
        a.token,
        'GET',
        `/jobs?where=status.id=${await statusId(a, 'Completed')}&fields=status.label`,
      );
      assert.deepEqual(
        res.body.jobs.map((j: { status: unknown }) => j.status),
        [{ id: await statusId(a, 'Completed'), label: 'Completed' }],
      );
      assert.equal((await call(t.app, a.token, 'GET', '/jobs?sort=createdBy.id,priority')).status, 200);
    });

    it('applies a batch all or nothing (no reference is used up visibly)', async () => {
      await assertAtomicBatch(t, a, 'jobs', { title: 'Good' }, { title: 'Bad', priority: 'never' });
    });

    it("isolates accounts: A cannot see or change B's jobs", async () => {
      const j = (await call(t.app, b.token, 'POST', '/jobs', { jobs: [{ title: 'B job' }] })).body.jobs[0];
      await assertIsolated(t, a, b, 'jobs', j.id, { title: 'Stolen' });
    });

    it('lets Employees do everything with jobs', async () => {
      const emp = await addUser(t, a, 'employee');
      const j = (await create([{ title: 'By employee' }], emp.token)).body.jobs[0];
      assert.deepEqual(j.createdBy, { id: emp.id });
      assert.equal(
        (await call(t.app, emp.token, 'PATCH', '/jobs', { jobs: [{ id: j.id, priority: 'high' }] })).status,
        200,
      );
      assert.equal((await call(t.app, emp.token, 'DELETE', `/jobs/${j.id}`)).status, 200);
    });

    it('lets a Contractor read and update only the jobs assigned to them, never create or delete', async () => {
      const con = await addUser(t, a, 'contractor');
      const [mine, other] = (await create([{ title: 'Assigned' }, { title: 'Not assigned' }])).body.jobs.map(
        (j: { id: number }) => j.id,
      );
      await call(t.app, a.token, 'POST', '/visits', { visits: [visit(mine, con.id), visit(other, a.adminId)] });
      const listed = await call(t.app, con.token, 'GET', '/jobs');
      assert.deepEqual(
        listed.body.jobs.map((j: { id: number }) => j.id),
        [mine],
      );
      assert.equal((await call(t.app, con.token, 'GET', `/jobs/${other}`)).status, 404);
      const p = await call(t.app, con.token, 'PATCH', '/jobs', {
        jobs: [{ id: mine, status: { id: await statusId(a, 'In progress') } }],
      });
      assert.equal(p.status, 200, p.raw);
      const q = await call(t.app, con.token, 'PATCH', '/jobs', { jobs: [{ id: other, title: 'Mine now' }] });
      assert.deepEqual(errorsOf(q), [code('notFound', 'id')]);
      assert.equal((await create([{ title: 'Nope' }], con.token)).status, 403);
      assert.equal((await call(t.app, con.token, 'DELETE', `/jobs/${mine}`)).status, 403);
      assert.equal(
        (await call(t.app, a.token, 'GET', `/jobs/${other}?fields=title`)).body.jobs[0].title,
        'Not assigned',
      );
    });

    it('nulls createdBy when the creating user is deleted', async () => {
      const emp = await addUser(t, a, 'employee');
      const j = (await create([{ title: 'Orphan' }], emp.token)).body.jobs[0];
      assert.equal((await call(t.app, a.token, 'DELETE', `/users/${emp.id}`)).status, 200);
      assert.equal((await call(t.app, a.token, 'GET', `/jobs/${j.id}`)).body.jobs[0].createdBy, null);
    });
  });
}
