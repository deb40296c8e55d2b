import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { operator } from '../../accounts/service.js';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';

/**
 * The holes PRODUCT §2's roles had, each tried as the role that must be refused: an Employee
 * writing workgroup membership or deleting themself, a Contractor deleting by PATCH what DELETE
 * refuses, an account left without an Administrator. And a membership changed from the user's side
 * is the workgroup's change too: an event, a new `modified`, a new ETag.
 */
for (const dialect of DIALECTS) {
  describe(`role holes (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect, { deliveries: false });

    const get = async (path: string, token = a.token) => {
      const res = await call(t.app, token, 'GET', path);
      assert.equal(res.status, 200, res.raw);
      return res;
    };
    const workgroup = async (name: string, users: number[] = []) =>
      (
        await call(t.app, a.token, 'POST', '/workgroups', {
          workgroups: [{ name, users: users.map((id) => ({ id })) }],
        })
      ).body.workgroups[0] as { id: number };
    const membersOf = async (id: number) =>
      ((await get(`/workgroups/${id}`)).body.workgroups[0].users as { id: number }[]).map((u) => u.id);
    const roleOf = async (id: number) =>
      (await get(`/users/${id}?fields=role.name,deleted`)).body.users[0] as {
        role: { name: string };
        deleted: boolean;
      };
    const lastEventId = async () =>
      ((await get('/events?sort=-id&recordsPerPage=1')).body.events[0]?.id as number) ?? 0;

    test('an Employee cannot change workgroup membership through their own user (403, nothing changes)', async () => {
      const emp = await addUser(t, a, 'employee');
      const mine = await workgroup(`Mine ${dialect}`, [emp.id]);
      const other = await workgroup(`Other ${dialect}`);
      for (const workgroups of [[{ id: other.id }], [], [{ id: mine.id }, { id: other.id }]]) {
        const res = await call(t.app, emp.token, 'PATCH', '/users', { users: [{ id: emp.id, workgroups }] });
        assert.equal(res.status, 403, res.raw);
        assert.equal(res.body.error.code, 1021);
      }
      assert.deepEqual(await membersOf(mine.id), [emp.id]);
      assert.deepEqual(await membersOf(other.id), []);
      // The rest of their own user is still theirs to change.
      const own = await call(t.app, emp.token, 'PATCH', `/users/${emp.id}`, { users: [{ companyName: 'Mine' }] });
      assert.equal(own.status, 200, own.raw);
    });

    test('an Employee cannot delete their own user, physically or logically (403, the user stays)', async () => {
      const emp = await addUser(t, a, 'employee');
      for (const res of [
        await call(t.app, emp.token, 'DELETE', `/users/${emp.id}`),
        await call(t.app, emp.token, 'DELETE', '/users', { users: [{ id: emp.id }] }),
        await call(t.app, emp.token, 'PATCH', '/users', { users: [{ id: emp.id, deleted: true }] }),
      ]) {
        assert.equal(res.status, 403, res.raw);
        assert.equal(res.body.error.code, 1021);
      }
      assert.equal((await roleOf(emp.id)).deleted, false);
      assert.equal((await call(t.app, emp.token, 'GET', `/users/${emp.id}`)).status, 200, 'their token still works');
    });

    test('a Contractor cannot delete an assigned job or visit by PATCH deleted:true, nor restore one (403)', async () => {
      const con = await addUser(t, a, 'contractor');
      const job = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: `Assigned ${dialect}` }] })).body
        .jobs[0];
      const visit = (
        await call(t.app, a.token, 'POST', '/visits', {
          visits: [
            {
              job: { id: job.id },
              user: { id: con.id },
              label: 'Fix',
              startTime: '2030-01-01T09:00:00Z',
              endTime: '2030-01-01T10:00:00Z',
            },
          ],
        })
      ).body.visits[0];
      // DELETE is refused, and so is its PATCH form.
      assert.equal((await call(t.app, con.token, 'DELETE', `/jobs/${job.id}`)).status, 403);
      assert.equal((await call(t.app, con.token, 'DELETE', `/visits/${visit.id}`)).status, 403);
      for (const [path, name] of [
        [`/jobs/${job.id}`, 'jobs'],
        [`/visits/${visit.id}`, 'visits'],
        ['/jobs', 'jobs'],
      ] as const) {
        const id = name === 'jobs' ? job.id : visit.id;
        const res = await call(t.app, con.token, 'PATCH', path, { [name]: [{ id, deleted: true }] });
        assert.equal(res.status, 403, `${path}: ${res.raw}`);
        assert.equal(res.body.error.code, 1021);
      }
      assert.equal((await get(`/jobs/${job.id}`)).body.jobs[0].deleted, false);
      assert.equal((await get(`/visits/${visit.id}`)).body.visits[0].deleted, false);
      // Restoring what an Administrator deleted is a deletion decision too.
      await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: job.id, deleted: true }] });
      const restore = await call(t.app, con.token, 'PATCH', '/jobs', { jobs: [{ id: job.id, deleted: false }] });
      assert.equal(restore.status, 403, restore.raw);
      assert.equal((await get(`/jobs/${job.id}`)).body.jobs[0].deleted, true);
      await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: job.id, deleted: false }] });
      // Their other writes on the visit still work.
      const state = await call(t.app, con.token, 'PATCH', `/visits/${visit.id}`, { visits: [{ state: 'travelling' }] });
      assert.equal(state.status, 200, state.raw);
      // An Administrator still deletes either way.
      const del = await call(t.app, a.token, 'PATCH', '/visits', { visits: [{ id: visit.id, deleted: true }] });
      assert.equal(del.status, 200, del.raw);
    });

    test('the account always keeps an Administrator who is not deleted', async () => {
      // Alone: the last Administrator cannot demote themself.
      const alone = await call(t.app, a.token, 'PATCH', '/users', {
        users: [{ id: a.adminId, role: { id: a.roleIds.employee } }],
      });
      assert.equal(alone.status, 422, alone.raw);
      assert.deepEqual(errorsOf(alone), ['1052:role']);
      assert.equal((await roleOf(a.adminId)).role.name, 'Administrator');

      // A logically deleted Administrator does not count.
      const ghost = await addUser(t, a, 'administrator');
      assert.equal(
        (await call(t.app, a.token, 'PATCH', '/users', { users: [{ id: ghost.id, deleted: true }] })).status,
        200,
      );
      const stillAlone = await call(t.app, a.token, 'PATCH', `/users/${a.adminId}`, {
        users: [{ role: { id: a.roleIds.contractor } }],
      });
      assert.equal(stillAlone.status, 422, stillAlone.raw);
      assert.deepEqual(errorsOf(stillAlone), ['1052:role']);

      // Two of them: one demoting themself is fine; both at once is not, nor demoting self and
      // deleting the other in one batch.
      const second = await addUser(t, a, 'administrator');
      for (const other of [{ role: { id: a.roleIds.employee } }, { deleted: true }]) {
        const both = await call(t.app, a.token, 'PATCH', '/users', {
          users: [
            { id: second.id, ...other },
            { id: a.adminId, role: { id: a.roleIds.employee } },
          ],
        });
        assert.equal(both.status, 422, both.raw);
        assert.deepEqual(both.body.metadata.invalidItems, [0, 1]);
        assert.deepEqual(errorsOf(both), [`1052:${'deleted' in other ? 'deleted' : 'role'}`, '1052:role']);
        assert.equal((await roleOf(second.id)).role.name, 'Administrator');
        assert.equal((await roleOf(second.id)).deleted, false);
        assert.equal((await roleOf(a.adminId)).role.name, 'Administrator');
      }

      // The operator (the CLI, acting as an Administrator who is no user) deleting the last one
      // physically, or demoting it: refused the same way.
      const users = t.services.registry.get('users')!;
      const byOperator = (op: 'update' | 'delete', input: unknown[]) =>
        t.services.writer.write({ collection: users, caller: operator(a.accountId, t.clock.now), op, input });
      // Second demotes themself: allowed, an Administrator is left.
      const self = await call(t.app, second.token, 'PATCH', `/users/${second.id}`, {
        users: [{ role: { id: a.roleIds.employee } }],
      });
      assert.equal(self.status, 200, self.raw);
      const physical = await byOperator('delete', [{ id: a.adminId }]);
      assert.equal(physical.result, 'failure');
      assert.deepEqual(
        physical.result === 'failure' && physical.failures[0].errors.map((e) => `${e.code}:${e.field}`),
        ['1041:id'],
      );
      const demoted = await byOperator('update', [{ id: a.adminId, role: { id: a.roleIds.employee } }]);
      assert.equal(demoted.result, 'failure');
      assert.equal((await roleOf(a.adminId)).role.name, 'Administrator');
      // Promoting another first makes the same change possible; then that one is the last.
      const promote = (id: number, role: number) => byOperator('update', [{ id, role: { id: role } }]);
      assert.equal((await promote(second.id, a.roleIds.administrator)).result, 'success');
      assert.equal((await promote(a.adminId, a.roleIds.employee)).result, 'success', 'another is left');
      assert.equal((await byOperator('delete', [{ id: second.id }])).result, 'failure', 'the last one again');
      assert.equal((await promote(a.adminId, a.roleIds.administrator)).result, 'success');
    });

    test("membership changed from the user's side is the workgroup's change: event with its users, modified and ETag move", async () => {
      const u = await addUser(t, a, 'employee');
      const g = await workgroup(`Crew ${dialect}`);
      const untouched = await workgroup(`Untouched ${dialect}`, [a.adminId]);
      const read = async (id: number) => {
        const res = await get(`/workgroups/${id}?fields=*`);
        return { etag: res.headers.etag as string, modified: res.body.workgroups[0].modified as string };
      };
      const before = await read(g.id);
      const untouchedBefore = await read(untouched.id);
      t.clock.now += 5000;
      const since = await lastEventId();
      const res = await call(t.app, a.token, 'PATCH', '/users', { users: [{ id: u.id, workgroups: [{ id: g.id }] }] });
      assert.equal(res.status, 200, res.raw);
      const after = await read(g.id);
      assert.notEqual(after.etag, before.etag, 'the ETag changes');
      assert.ok(
        Date.parse(after.modified) > Date.parse(before.modified),
        `modified moves: ${before.modified} -> ${after.modified}`,
      );
      assert.deepEqual(
        await read(untouched.id),
        untouchedBefore,
        'a workgroup the change does not touch stays as it was',
      );
      const events = (await get(`/events?where=${encodeURIComponent(`id > ${since} and collection = "workgroups"`)}`))
        .body.events;
      assert.equal(events.length, 1, JSON.stringify(events));
      assert.equal(events[0].type, 'workgroups.updated');
      assert.equal(events[0].item.id, g.id);
      assert.deepEqual(events[0].changes.users, { old: [], new: [{ id: u.id }] });
      assert.deepEqual(events[0].data.users, [{ id: u.id }]);

      // Leaving, and the user deleted: each time the workgroup's event, modified and ETag.
      for (const change of [
        () => call(t.app, a.token, 'PATCH', '/users', { users: [{ id: u.id, workgroups: [] }] }),
        async () => {
          await call(t.app, a.token, 'PATCH', '/users', { users: [{ id: u.id, workgroups: [{ id: g.id }] }] });
          t.clock.now += 5000;
          return call(t.app, a.token, 'DELETE', `/users/${u.id}`);
        },
      ]) {
        const was = await read(g.id);
        t.clock.now += 5000;
        const from = await lastEventId();
        assert.equal((await change()).status, 200);
        const now = await read(g.id);
        assert.notEqual(now.etag, was.etag);
        assert.ok(Date.parse(now.modified) > Date.parse(was.modified));
        const evs = (await get(`/events?where=${encodeURIComponent(`id > ${from} and collection = "workgroups"`)}`))
          .body.events;
        assert.deepEqual(evs.at(-1).changes.users, { old: [{ id: u.id }], new: [] });
      }
      // Setting the same list again changes nothing: no event, the same ETag.
      const same = await read(untouched.id);
      const from = await lastEventId();
      await call(t.app, a.token, 'PATCH', '/users', {
        users: [{ id: a.adminId, workgroups: [{ id: untouched.id }] }],
      });
      assert.deepEqual(await read(untouched.id), same);
      const evs = (await get(`/events?where=${encodeURIComponent(`id > ${from} and collection = "workgroups"`)}`)).body
        .events;
      assert.deepEqual(evs, []);
    });
  });
}
