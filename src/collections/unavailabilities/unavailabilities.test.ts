import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, errorsOf, skipUnless } from '../../../test/helpers.js';

/** PRODUCT §11: leave, sickness, training; Administrators write, Employees read all, Contractors their own. */
for (const dialect of DIALECTS) {
  describe(`unavailabilities (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let employee: { id: number; token: string };
    let contractor: { id: number; token: string };
    let bUser: number;
    before(async () => {
      employee = await addUser(t, a, 'employee');
      contractor = await addUser(t, a, 'contractor');
      bUser = (await addUser(t, b, 'employee')).id;
    });

    const leave = (userId: number, extra: Record<string, unknown> = {}) => ({
      user: { id: userId },
      startTime: '2030-02-01T00:00:00Z',
      endTime: '2030-02-08T00:00:00Z',
      ...extra,
    });
    const post = (items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', '/unavailabilities', { unavailabilities: items });

    it('creates with reason other by default; reasons are leave, sick, training, other', async () => {
      const res = await post([leave(employee.id), leave(contractor.id, { reason: 'sick', notes: 'Flu' })]);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.unavailabilities[0].reason, 'other');
      assert.equal(res.body.unavailabilities[1].reason, 'sick');
      assert.deepEqual(res.body.unavailabilities[1].user, { id: contractor.id });
      assert.deepEqual(errorsOf(await post([leave(employee.id, { reason: 'holiday' })])), ['1041:reason']);
      const p = await call(t.app, a.token, 'PATCH', '/unavailabilities', {
        unavailabilities: [{ id: res.body.unavailabilities[0].id, reason: 'training' }],
      });
      assert.equal(p.status, 200, p.raw);
      assert.equal(p.body.unavailabilities[0].reason, 'training');
    });

    it('only Administrators write (403); Employees read all, Contractors only their own', async () => {
      assert.equal((await post([leave(employee.id)], employee.token)).status, 403);
      assert.equal((await post([leave(contractor.id)], contractor.token)).status, 403);
      const mine = (await post([leave(contractor.id)])).body.unavailabilities[0].id;
      const theirs = (await post([leave(employee.id)])).body.unavailabilities[0].id;
      const patched = await call(t.app, employee.token, 'PATCH', `/unavailabilities/${theirs}`, {
        unavailabilities: [{ notes: 'x' }],
      });
      assert.equal(patched.status, 403);
      const all = (await call(t.app, employee.token, 'GET', '/unavailabilities?recordsPerPage=1000')).body
        .unavailabilities;
      assert.ok(all.some((u: any) => u.id === mine) && all.some((u: any) => u.id === theirs));
      const own = (await call(t.app, contractor.token, 'GET', '/unavailabilities?recordsPerPage=1000')).body
        .unavailabilities;
      assert.ok(own.some((u: any) => u.id === mine));
      assert.ok(own.every((u: any) => u.user.id === contractor.id));
      assert.equal((await call(t.app, contractor.token, 'GET', `/unavailabilities/${theirs}`)).status, 404);
    });

    it('bad input names the field, nothing saved', async () => {
      const before = (await call(t.app, a.token, 'GET', '/unavailabilities')).body.metadata.recordsCount;
      const cases: [Record<string, unknown>, string][] = [
        [leave(employee.id, { endTime: '2030-01-01T00:00:00Z' }), '1041:endTime'],
        [leave(employee.id, { startTime: 'soon' }), '1041:startTime'],
        [leave(employee.id, { endTime: '2030-02-31T00:00:00Z' }), '1041:endTime'],
        [leave(bUser), '1045:user'],
        [{ startTime: '2030-02-01T00:00:00Z', endTime: '2030-02-02T00:00:00Z' }, '1040:user'],
      ];
      for (const [item, expected] of cases) {
        const res = await post([leave(employee.id), item]);
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), [expected], JSON.stringify(item));
      }
      assert.equal((await call(t.app, a.token, 'GET', '/unavailabilities')).body.metadata.recordsCount, before);
    });
  });
}
