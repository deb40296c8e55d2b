import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addUser, suiteWithTenants, call, DIALECTS, skipUnless } from './helpers.js';

for (const dialect of DIALECTS) {
  describe(`users' active in where (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    test('where=active = true / false, like every other flag; 1 and 0 as the spec shows it; anything else is a 400', async () => {
      const kept = await addUser(t, a);
      const gone = await addUser(t, a);
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/users/${gone.id}`, { users: [{ deleted: true }] })).status,
        200,
      );
      const ids = async (where: string) => {
        const res = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent(where)}&fields=active`);
        assert.equal(res.status, 200, res.raw);
        return res.body.users.map((u: { id: number }) => u.id) as number[];
      };
      const active = await ids('active = true');
      assert.ok(active.includes(kept.id) && !active.includes(gone.id), JSON.stringify(active));
      assert.deepEqual(await ids('active = false'), [gone.id]);
      assert.deepEqual(await ids('active != true'), [gone.id]);
      assert.deepEqual(await ids('active = 1'), active);
      assert.deepEqual(await ids('active = 0'), [gone.id]);
      const bad = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent('active = "yes"')}`);
      assert.equal(bad.status, 400, bad.raw);
      assert.match(bad.raw, /'active' needs 0, 1, true or false/);
    });
  });
}
