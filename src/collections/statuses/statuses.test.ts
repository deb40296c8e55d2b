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

for (const dialect of DIALECTS) {
  describe(`statuses (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const list = async (tenant: Tenant, query = '') =>
      (await call(t.app, tenant.token, 'GET', `/statuses${query}`)).body;
    const defaults = async (tenant: Tenant) =>
      (await list(tenant, '?where=isDefault=true')).statuses.map((s: { label: string }) => s.label);
    const create = (tenant: Tenant, items: unknown[]) =>
      call(t.app, tenant.token, 'POST', '/statuses', { statuses: items });

    it('seeds every new account with four statuses, New being the default', async () => {
      const body = await list(a, '?fields=label,group,isDefault,colour');
      assert.deepEqual(
        body.statuses.map((s: Record<string, unknown>) => [s.label, s.group, s.isDefault]),
        [
          ['New', 'new', true],
          ['In progress', 'inProgress', false],
          ['On hold', 'onHold', false],
          ['Completed', 'completed', false],
        ],
      );
      assert.ok(body.statuses.every((s: { colour: string }) => /^#[0-9A-F]{6}$/.test(s.colour)));
      assert.equal((await list(b)).metadata.recordsCount, 4);
    });

    it('creates, reads, lists, patches and deletes with defaults and standard members', async () => {
      const res = await create(a, [{ label: 'Quoted' }]);
      assert.equal(res.status, 200, res.raw);
      const s = res.body.statuses[0];
      assert.deepEqual(
        { ...s, created: undefined, modified: undefined },
        {
          id: s.id,
          label: 'Quoted',
          colour: null,
          group: 'new',
          isDefault: false,
          deleted: false,
          account: { id: a.accountId },
          created: undefined,
          modified: undefined,
        },
      );
      assert.match(s.created, /^\d{4}-\d{2}-\d{2}T.*Z$/);
      const got = await call(t.app, a.token, 'GET', `/statuses/${s.id}?fields=label,group`);
      assert.deepEqual(got.body.statuses, [{ id: s.id, label: 'Quoted', group: 'new' }]);
      const patched = await call(t.app, a.token, 'PATCH', '/statuses', {
        statuses: [{ id: s.id, colour: '#123456', group: 'onHold', deleted: true }],
      });
      assert.equal(patched.status, 200, patched.raw);
      assert.equal(patched.body.statuses[0].colour, '#123456');
      assert.equal(patched.body.statuses[0].deleted, true);
      const del = await call(t.app, a.token, 'DELETE', `/statuses/${s.id}`);
      assert.deepEqual(del.body.statuses, [{ id: s.id }]);
      assert.equal((await call(t.app, a.token, 'GET', `/statuses/${s.id}`)).status, 404);
    });

    it('requires label, refuses unknown, read-only and malformed members', async () => {
      let res = await create(a, [{ colour: '#000000' }]);
      assert.deepEqual(errorsOf(res), [code('required', 'label')]);
      res = await create(a, [{ label: 'X', shade: 1, created: '2020-01-01T00:00:00Z', colour: 'red', group: 'later' }]);
      assert.deepEqual(errorsOf(res).sort(), [
        code('invalid', 'colour'),
        code('invalid', 'group'),
        code('readOnly', 'created'),
        code('unknown', 'shade'),
      ]);
    });

    it('keeps label unique in the account, not across accounts', async () => {
      let res = await create(a, [{ label: 'New' }]);
      assert.deepEqual(errorsOf(res), [code('unique', 'label')]);
      res = await create(a, [{ label: 'Twin' }, { label: 'Twin' }]);
      assert.deepEqual(errorsOf(res), [code('duplicate', 'label')]);
      res = await create(b, [{ label: 'Twin' }]);
      assert.equal(res.status, 200);
      res = await create(a, [{ label: 'Twin' }]);
      assert.equal(res.status, 200);
    });

    it('has exactly one default: setting another clears the old one', async () => {
      const res = await create(a, [{ label: 'Triage', isDefault: true }]);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(await defaults(a), ['Triage']);
      const newId = (await list(a, '?where=label="New"')).statuses[0].id;
      const p = await call(t.app, a.token, 'PATCH', '/statuses', { statuses: [{ id: newId, isDefault: true }] });
      assert.equal(p.status, 200);
      assert.deepEqual(await defaults(a), ['New']);
      assert.deepEqual(await defaults(b), ['New']);
    });

    it('refuses to unset, delete or logically delete the default', async () => {
      const id = (await list(a, '?where=isDefault=true')).statuses[0].id;
      let res = await call(t.app, a.token, 'PATCH', '/statuses', { statuses: [{ id, isDefault: false }] });
      assert.deepEqual(errorsOf(res), [code('conflict', 'isDefault')]);
      res = await call(t.app, a.token, 'PATCH', '/statuses', { statuses: [{ id, deleted: true }] });
      assert.deepEqual(errorsOf(res), [code('conflict', 'deleted')]);
      res = await call(t.app, a.token, 'DELETE', '/statuses', { statuses: [{ id }] });
      assert.deepEqual(errorsOf(res), [code('conflict', 'isDefault')]);
      assert.deepEqual(await defaults(a), ['New']);
    });

    it('refuses to physically delete a status a job uses, naming the field', async () => {
      const s = (await create(a, [{ label: 'Busy' }])).body.statuses[0];
      const job = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Fix', status: { id: s.id } }] });
      assert.equal(job.status, 200, job.raw);
      const res = await call(t.app, a.token, 'DELETE', '/statuses', { statuses: [{ id: s.id }] });
      assert.equal(res.status, 422);
      assert.deepEqual(errorsOf(res), [code('inUse', 'id')]);
      assert.equal((await call(t.app, a.token, 'GET', `/statuses/${s.id}`)).status, 200);
      await call(t.app, a.token, 'DELETE', '/jobs', { jobs: [{ id: job.body.jobs[0].id }] });
      assert.equal((await call(t.app, a.token, 'DELETE', '/statuses', { statuses: [{ id: s.id }] })).status, 200);
    });

    it('filters, sorts and selects on its fields', async () => {
      let body = await list(a, '?where=group="completed"+or+label~"progr"&sort=-label&fields=label');
      assert.deepEqual(
        body.statuses.map((s: { label: string }) => s.label),
        ['In progress', 'Completed'],
      );
      body = await list(a, '?sort=group,label&fields=group&recordsPerPage=2');
      assert.deepEqual(Object.keys(body.statuses[0]), ['id', 'group']);
      assert.equal(body.statuses[0].group, 'completed');
    });

    it('applies a batch all or nothing', async () => {
      await assertAtomicBatch(t, a, 'statuses', { label: 'Batch ok' }, { label: 'Bad', colour: 'nope' });
    });

    it("isolates accounts: A cannot see or change B's statuses", async () => {
      const s = (await create(b, [{ label: 'Secret' }])).body.statuses[0];
      await assertIsolated(t, a, b, 'statuses', s.id, { label: 'Stolen' });
    });

    it('lets Employees read but not write; Contractors neither', async () => {
      const emp = await addUser(t, a, 'employee');
      const con = await addUser(t, a, 'contractor');
      assert.equal((await call(t.app, emp.token, 'GET', '/statuses')).status, 200);
      assert.equal((await call(t.app, emp.token, 'POST', '/statuses', { statuses: [{ label: 'E' }] })).status, 403);
      assert.equal((await call(t.app, con.token, 'GET', '/statuses')).status, 403);
      assert.equal((await call(t.app, con.token, 'POST', '/statuses', { statuses: [{ label: 'C' }] })).status, 403);
    });
  });
}
