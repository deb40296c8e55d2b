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
} from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

for (const dialect of DIALECTS) {
  describe(`workgroups (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const create = (items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', '/workgroups', { workgroups: items });
    const userGroups = async (userId: number) =>
      (await call(t.app, a.token, 'GET', `/users/${userId}?fields=*,[*]`)).body.users[0].workgroups;

    it('creates, reads, lists, patches and deletes; users lists the members', async () => {
      const u = await addUser(t, a, 'employee');
      const res = await create([{ name: 'Plumbers', users: [{ id: a.adminId }, { id: u.id }] }]);
      assert.equal(res.status, 200, res.raw);
      const g = res.body.workgroups[0];
      assert.deepEqual(
        { ...g, created: undefined, modified: undefined },
        {
          id: g.id,
          name: 'Plumbers',
          users: [{ id: a.adminId }, { id: u.id }],
          account: { id: a.accountId },
          deleted: false,
          created: undefined,
          modified: undefined,
        },
      );
      const full = await call(t.app, a.token, 'GET', `/workgroups/${g.id}?fields=users,[*]`);
      assert.deepEqual(full.body.workgroups[0].users, [
        { id: a.adminId, firstName: 'Ada', lastName: 'Admin' },
        { id: u.id, firstName: 'Bob', lastName: 'Builder' },
      ]);
      const p = await call(t.app, a.token, 'PATCH', '/workgroups', {
        workgroups: [{ id: g.id, name: 'Pipe crew', deleted: true }],
      });
      assert.equal(p.status, 200, p.raw);
      assert.deepEqual(
        [p.body.workgroups[0].name, p.body.workgroups[0].deleted, p.body.workgroups[0].users.length],
        ['Pipe crew', true, 2],
      );
      assert.deepEqual((await call(t.app, a.token, 'DELETE', `/workgroups/${g.id}`)).body.workgroups, [{ id: g.id }]);
      assert.equal((await call(t.app, a.token, 'GET', `/workgroups/${g.id}`)).status, 404);
      assert.deepEqual(await userGroups(u.id), []);
    });

    it("writing users sets the membership, and a user's workgroups reflect it", async () => {
      const u = await addUser(t, a, 'employee');
      const [g1, g2] = (await create([{ name: 'Day shift', users: [{ id: u.id }] }, { name: 'Night shift' }])).body
        .workgroups;
      assert.deepEqual(g2.users, []);
      assert.deepEqual(await userGroups(u.id), [{ id: g1.id, name: 'Day shift' }]);
      await call(t.app, a.token, 'PATCH', '/workgroups', {
        workgroups: [
          { id: g1.id, users: [] },
          { id: g2.id, users: [{ id: u.id }, { id: u.id }] },
        ],
      });
      assert.deepEqual(await userGroups(u.id), [{ id: g2.id, name: 'Night shift' }]);
      const kept = await call(t.app, a.token, 'PATCH', '/workgroups', { workgroups: [{ id: g2.id, name: 'Nights' }] });
      assert.deepEqual(kept.body.workgroups[0].users, [{ id: u.id }]);
      assert.deepEqual(await userGroups(u.id), [{ id: g2.id, name: 'Nights' }]);
    });

    it('requires name, unique in the account; members must be users of the account', async () => {
      assert.deepEqual(errorsOf(await create([{ users: [] }])), [code('required', 'name')]);
      await create([{ name: 'Unique' }]);
      assert.deepEqual(errorsOf(await create([{ name: 'Unique' }])), [code('unique', 'name')]);
      assert.equal((await create([{ name: 'Unique' }], b.token)).status, 200);
      assert.deepEqual(errorsOf(await create([{ name: 'Mixed', users: [{ id: b.adminId }] }])), [
        code('reference', 'users'),
      ]);
      assert.deepEqual(errorsOf(await create([{ name: 'Bad', users: [a.adminId] }])), [code('association', 'users')]);
      const res = await create([{ name: 'Ro', id: 5, leader: { id: a.adminId }, created: '2020-01-01T00:00:00Z' }]);
      assert.deepEqual(errorsOf(res).sort(), [
        code('readOnly', 'created'),
        code('readOnly', 'id'),
        code('unknown', 'leader'),
      ]);
    });

    it('filters, sorts and selects on its fields', async () => {
      await create([{ name: 'Sort Alpha' }, { name: 'Sort Beta', deleted: true }]);
      let res = await call(t.app, a.token, 'GET', '/workgroups?where=name~"sort "&sort=-name&fields=name');
      assert.deepEqual(
        res.body.workgroups,
        res.body.workgroups.map((g: { id: number; name: string }) => ({ id: g.id, name: g.name })),
      );
      assert.deepEqual(
        res.body.workgroups.map((g: { name: string }) => g.name),
        ['Sort Beta', 'Sort Alpha'],
      );
      res = await call(t.app, a.token, 'GET', '/workgroups?where=name~"sort"+and+deleted=false&fields=deleted');
      assert.deepEqual(
        res.body.workgroups.map((g: { deleted: boolean }) => g.deleted),
        [false],
      );
    });

    it('applies a batch all or nothing, memberships included', async () => {
      await assertAtomicBatch(t, a, 'workgroups', { name: 'Batch good', users: [{ id: a.adminId }] }, { name: '' });
      assert.ok(!(await userGroups(a.adminId)).some((g: { name: string }) => g.name === 'Batch good'));
    });

    it("isolates accounts: A cannot see or change B's workgroups", async () => {
      const g = (await create([{ name: 'B team', users: [{ id: b.adminId }] }], b.token)).body.workgroups[0];
      await assertIsolated(t, a, b, 'workgroups', g.id, { users: [] });
    });

    it('lets Employees read but not write; Contractors neither', async () => {
      const emp = await addUser(t, a, 'employee');
      const con = await addUser(t, a, 'contractor');
      assert.equal((await call(t.app, emp.token, 'GET', '/workgroups')).status, 200);
      assert.equal((await create([{ name: 'By employee' }], emp.token)).status, 403);
      assert.equal((await call(t.app, con.token, 'GET', '/workgroups')).status, 403);
      assert.equal((await create([{ name: 'By contractor' }], con.token)).status, 403);
    });
  });
}
