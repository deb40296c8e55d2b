import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, call, suiteWithTenants, newUser, skipUnless, type Tenant } from '../../../test/helpers.js';

const DEFAULT_FIELDS = [
  'id',
  'firstName',
  'lastName',
  'companyName',
  'email',
  'phone',
  'mobile',
  'hourlyRate',
  'active',
  'deleted',
  'colour',
  'isAssignable',
  'role',
  'account',
  'status',
  // PRODUCT §15: planning's members are default fields.
  'workingHours',
  'homeLocation',
  'skills',
  'customFields',
];

const errorsOf = (body: any, i = 0) => body.failures[i].errors.map((e: any) => [e.code, e.field]);

for (const dialect of DIALECTS) {
  describe(`users (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const post = (tenant: Tenant, items: unknown[]) => call(t.app, tenant.token, 'POST', '/users', { users: items });
    const patch = (tenant: Tenant, items: unknown[]) => call(t.app, tenant.token, 'PATCH', '/users', { users: items });

    test('create applies the defaults of spec 2.3 and returns default fields in request order', async () => {
      const r = await post(a, [
        newUser(a.accountId, { firstName: 'First' }),
        newUser(a.accountId, {
          firstName: 'Second',
          login: 'second-a',
          newPassword: 'long enough pw',
          newPasswordConfirm: 'long enough pw',
        }),
      ]);
      assert.equal(r.status, 200, r.raw);
      assert.equal(r.body.result, 'success');
      assert.deepEqual(r.body.metadata, { receivedItemsCount: 2, validItems: [0, 1], invalidItems: [] });
      assert.deepEqual(
        r.body.users.map((u: { firstName: string }) => u.firstName),
        ['First', 'Second'],
      );
      const u = r.body.users[0];
      assert.deepEqual(Object.keys(u).sort(), [...DEFAULT_FIELDS].sort());
      assert.equal(u.hourlyRate, 0);
      assert.equal(u.active, 1);
      assert.equal(u.deleted, false);
      assert.equal(u.colour, '#000000');
      assert.equal(u.isAssignable, false);
      assert.deepEqual(u.status, {});
      assert.deepEqual(u.account, { id: a.accountId });
      assert.deepEqual(u.role, { id: a.roleIds.employee }, 'new users are Employees');
      assert.ok(!('login' in r.body.users[1]) && !('newPassword' in r.body.users[1]));
    });

    test('required fields: one 1040 error per missing field, with field set', async () => {
      const r = await post(a, [{ account: { id: a.accountId } }]);
      assert.equal(r.status, 422);
      assert.equal(r.body.result, 'failure');
      assert.deepEqual(errorsOf(r.body), [
        [1040, 'firstName'],
        [1040, 'lastName'],
        [1040, 'mobile'],
      ]);
      for (const e of r.body.failures[0].errors) {
        assert.equal(e.type, 'validation');
        assert.match(e.message, new RegExp(e.field));
      }
      const noAccount = await post(a, [{ firstName: 'a', lastName: 'b', mobile: '+4412345678' }]);
      assert.deepEqual(errorsOf(noAccount.body), [[1040, 'account']]);
    });

    test('field validation (PRODUCT 3)', async () => {
      // Extra members as JSON text, so that keys such as __proto__ reach the server as sent.
      const cases: [string, number, string][] = [
        ['"email":"not-an-email"', 1041, 'email'],
        ['"phone":"0123456"', 1041, 'phone'],
        ['"mobile":"+123"', 1041, 'mobile'],
        ['"mobile":"+1234567890123456"', 1041, 'mobile'],
        ['"colour":"red"', 1041, 'colour'],
        ['"colour":"#12345G"', 1041, 'colour'],
        ['"hourlyRate":-1', 1041, 'hourlyRate'],
        ['"hourlyRate":"10"', 1041, 'hourlyRate'],
        ['"isAssignable":1', 1041, 'isAssignable'],
        ['"firstName":""', 1041, 'firstName'],
        ['"active":0', 1042, 'active'],
        ['"id":5', 1042, 'id'],
        ['"created":"2020-01-01T00:00:00Z"', 1042, 'created'],
        ['"nickname":"x"', 1043, 'nickname'],
        ['"__proto__":{"isAdmin":true}', 1043, '__proto__'],
        ['"constructor":{"prototype":{}}', 1043, 'constructor'],
        ['"role":2', 1044, 'role'],
        [`"role":{"id":${a.roleIds.employee},"name":"Employee"}`, 1044, 'role'],
        [`"role":{"id":${b.roleIds.employee}}`, 1045, 'role'],
        [`"account":{"id":${b.accountId}}`, 1045, 'account'],
        ['"status":{"message":"x","timestamp":"yesterday"}', 1041, 'status'],
        ['"status":{"mood":"x"}', 1043, 'status.mood'],
        ['"login":"user-x1","newPassword":"short","newPasswordConfirm":"short"', 1041, 'newPassword'],
        [
          '"login":"user-x2","newPassword":"long enough pw","newPasswordConfirm":"long enough pX"',
          1041,
          'newPasswordConfirm',
        ],
        ['"newPassword":"long enough pw","newPasswordConfirm":"long enough pw"', 1040, 'login'],
        ['"login":"user-x3"', 1040, 'newPassword'],
      ];
      for (const [extra, code, field] of cases) {
        // Later duplicate keys win in JSON, so the extra members come last.
        const base = JSON.stringify(newUser(a.accountId)).slice(0, -1);
        const r = await call(t.app, a.token, 'POST', '/users', `{"users":[${base},${extra}}]}`);
        assert.equal(r.status, 422, `${extra}: ${r.raw}`);
        assert.ok(
          errorsOf(r.body).some(([c, f]: [number, string]) => c === code && f === field),
          `${extra} -> ${JSON.stringify(errorsOf(r.body))}`,
        );
        assert.doesNotMatch(r.raw, /long enough/, 'passwords are never echoed');
      }
      assert.equal(({} as Record<string, unknown>).isAdmin, undefined, 'no prototype pollution');
    });

    test('a batch is atomic: one invalid item saves nothing, indexes are reported', async () => {
      const before = (await call(t.app, a.token, 'GET', '/users')).body.metadata.recordsCount;
      const r = await post(a, [newUser(a.accountId), newUser(a.accountId, { colour: 'blue' }), newUser(a.accountId)]);
      assert.equal(r.status, 422);
      assert.deepEqual(r.body.metadata, { receivedItemsCount: 3, validItems: [0, 2], invalidItems: [1] });
      assert.equal(r.body.failures.length, 1);
      assert.equal(r.body.failures[0].rawData.colour, 'blue');
      assert.equal((await call(t.app, a.token, 'GET', '/users')).body.metadata.recordsCount, before);
    });

    test('login is unique in the whole service, also within one batch', async () => {
      const pw = { newPassword: 'long enough pw', newPasswordConfirm: 'long enough pw' };
      const taken = await post(b, [newUser(b.accountId, { login: a.login, ...pw })]);
      assert.equal(taken.status, 422);
      assert.deepEqual(errorsOf(taken.body), [[1046, 'login']]);
      const twice = await post(b, [
        newUser(b.accountId, { login: 'same-login', ...pw }),
        newUser(b.accountId, { login: 'same-login', ...pw }),
      ]);
      assert.equal(twice.status, 422);
      assert.deepEqual(twice.body.metadata.invalidItems, [1]);
    });

    test('fields modifier: default, names, association members, *,[*], unknown', async () => {
      const one = await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=firstName`);
      assert.deepEqual(one.body.users, [{ id: a.adminId, firstName: 'Ada' }]);
      // `id` alone selects the id alone, on a list too.
      assert.deepEqual((await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=id`)).body.users, [
        { id: a.adminId },
      ]);
      assert.deepEqual(Object.keys((await call(t.app, a.token, 'GET', '/users?fields=id')).body.users[0]), ['id']);
      const role = await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=role.name`);
      assert.deepEqual(role.body.users[0], {
        id: a.adminId,
        role: { id: a.roleIds.administrator, name: 'Administrator' },
      });
      const all = await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=*,[*]`);
      const u = all.body.users[0];
      assert.equal(u.login, a.login);
      assert.deepEqual(u.role, { id: a.roleIds.administrator, name: 'Administrator' });
      assert.deepEqual(Object.keys(u.account).sort(), [
        'address',
        'bankDetails',
        'companyAccountCode',
        'companyName',
        'countryCode',
        'currency',
        'email',
        'id',
        'licenses',
        'logo',
        'paperSize',
        'paymentTerms',
        'phone',
        'taxNumber',
        'timeZone',
      ]);
      assert.equal(u.account.companyName.startsWith('Alpha'), true);
      assert.deepEqual(u.workgroups, []);
      assert.ok(!('newPassword' in u) && !('passwordHash' in u));
      const star = await call(t.app, a.token, 'GET', `/users/${a.adminId}?fields=*`);
      assert.deepEqual(star.body.users[0].role, { id: a.roleIds.administrator });
      for (const bad of ['nope', 'newPassword', 'role.secret', 'firstName.x', '']) {
        const r = await call(t.app, a.token, 'GET', `/users?fields=${encodeURIComponent(bad)}`);
        assert.equal(r.status, 400, bad);
        assert.equal(r.body.error.code, 1002);
      }
      const meta = await call(t.app, a.token, 'GET', `/users/${a.adminId}`);
      assert.deepEqual(meta.body.metadata, { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 1 });
    });

    test('where: every operator, and/or, parentheses, null, values bound not spliced', async () => {
      const ids = (
        await post(a, [
          newUser(a.accountId, { firstName: 'Pumpkin', lastName: 'Zed', hourlyRate: 10, email: 'p@x.io' }),
          newUser(a.accountId, { firstName: 'Quince', lastName: "O'Neil", hourlyRate: 20 }),
          newUser(a.accountId, { firstName: 'Raisin', lastName: '50%_off', hourlyRate: 30, isAssignable: true }),
        ])
      ).body.users.map((u: { id: number }) => u.id);
      const q = async (w: string) => {
        const r = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent(w)}&recordsPerPage=1000`);
        assert.equal(r.status, 200, `${w}: ${r.raw}`);
        return r.body.users.map((u: { id: number }) => u.id).filter((id: number) => ids.includes(id));
      };
      assert.deepEqual(await q('firstName ~ "PUMP"'), [ids[0]]);
      assert.deepEqual(await q('lastName = "O\'Neil"'), [ids[1]]);
      assert.deepEqual(await q("lastName = 'O\\'Neil'"), [ids[1]]);
      assert.deepEqual(await q('lastName ~ "%"'), [ids[2]], '% is literal');
      assert.deepEqual(await q('lastName ~ "_"'), [ids[2]], '_ is literal');
      assert.deepEqual(await q('hourlyRate >= 20'), [ids[1], ids[2]]);
      assert.deepEqual(await q('hourlyRate < 20 and hourlyRate > 5'), [ids[0]]);
      assert.deepEqual(await q('hourlyRate <= 10 or isAssignable = true'), [ids[0], ids[2]]);
      assert.deepEqual(await q('(hourlyRate = 10 or hourlyRate = 30) and firstName !~ "rai"'), [ids[0]]);
      assert.deepEqual(await q(`email = null and id >= ${ids[0]}`), [ids[1], ids[2]]);
      assert.deepEqual(await q(`email != null and id >= ${ids[0]}`), [ids[0]]);
      assert.deepEqual(await q(`email != "p@x.io" and id >= ${ids[0]}`), [ids[1], ids[2]], 'null counts as different');
      assert.deepEqual(await q(`role.id = ${a.roleIds.employee} and id = ${ids[1]}`), [ids[1]]);
      assert.deepEqual(await q(`firstName = "x' or 1=1 --"`), []);
      // Spaces encoded as + (spec 4.3)
      const plus = await call(t.app, a.token, 'GET', '/users?where=firstName+~+%22quin%22');
      assert.deepEqual(
        plus.body.users.map((u: { id: number }) => u.id),
        [ids[1]],
      );
      for (const bad of [
        'firstName',
        'firstName ~',
        'nope = 1',
        'hourlyRate ~ "1"',
        'firstName = 1',
        'isAssignable > true',
        '(firstName = "a"',
        'firstName = "a" xor lastName = "b"',
        'hourlyRate < null',
        'password = "x"',
        '"unterminated',
      ]) {
        const r = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent(bad)}`);
        assert.equal(r.status, 400, bad);
        assert.equal(r.body.error.code, 1002, bad);
      }
    });

    test('sort and paging with true metadata', async () => {
      const desc = await call(t.app, a.token, 'GET', '/users?sort=-id&recordsPerPage=2');
      const all = (await call(t.app, a.token, 'GET', '/users?recordsPerPage=1000')).body;
      assert.deepEqual(
        desc.body.users.map((u: { id: number }) => u.id),
        all.users
          .map((u: { id: number }) => u.id)
          .reverse()
          .slice(0, 2),
      );
      assert.deepEqual(desc.body.metadata, {
        page: 1,
        pagesCount: Math.ceil(all.metadata.recordsCount / 2),
        recordsPerPage: 2,
        recordsCount: all.metadata.recordsCount,
      });
      const page2 = await call(t.app, a.token, 'GET', '/users?page=2&recordsPerPage=2');
      assert.deepEqual(
        page2.body.users.map((u: { id: number }) => u.id),
        all.users.slice(2, 4).map((u: { id: number }) => u.id),
      );
      const past = await call(t.app, a.token, 'GET', '/users?page=999');
      assert.deepEqual(past.body.users, []);
      assert.equal(past.body.metadata.recordsCount, all.metadata.recordsCount);
      const byName = await call(t.app, a.token, 'GET', '/users?sort=lastName,-firstName&recordsPerPage=1000');
      const names = byName.body.users.map((u: { lastName: string }) => u.lastName);
      assert.deepEqual(
        names,
        [...names].sort((x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)),
      );
      for (const bad of [
        'page=0',
        'page=x',
        'recordsPerPage=1001',
        'recordsPerPage=0',
        'sort=nope',
        'sort=newPassword',
        'page=1&page=2',
        'foo=bar',
      ]) {
        const r = await call(t.app, a.token, 'GET', `/users?${bad}`);
        assert.equal(r.status, 400, bad);
      }
    });

    test('PATCH: writable fields, status, logical deletion and restore', async () => {
      const id = (await post(a, [newUser(a.accountId)])).body.users[0].id;
      const r = await patch(a, [
        {
          id,
          companyName: 'Co',
          phone: '+4420700000',
          colour: null,
          hourlyRate: 12.5,
          isAssignable: true,
          role: { id: a.roleIds.contractor },
          status: { message: 'On site', timestamp: '2026-11-22T10:00:00+01:00' },
        },
      ]);
      assert.equal(r.status, 200, r.raw);
      const u = r.body.users[0];
      assert.deepEqual(Object.keys(u).sort(), [...DEFAULT_FIELDS].sort(), 'the full modified item');
      assert.equal(u.companyName, 'Co');
      assert.equal(u.colour, null);
      assert.equal(u.hourlyRate, 12.5);
      assert.deepEqual(u.role, { id: a.roleIds.contractor });
      assert.deepEqual(u.status, { message: 'On site', timestamp: '2026-11-22T10:00:00+01:00' });
      assert.equal(u.firstName, 'Bob', 'untouched fields stay');
      const del = await patch(a, [{ id, deleted: true }]);
      assert.equal(del.body.users[0].deleted, true);
      assert.equal(del.body.users[0].active, 0);
      assert.equal((await call(t.app, a.token, 'GET', `/users/${id}`)).body.users[0].deleted, true, 'still readable');
      const restore = await patch(a, [{ id, deleted: false }]);
      assert.equal(restore.body.users[0].active, 1);
      const bad = await patch(a, [{ firstName: 'no id' }, { id: 'x' }, { id, active: 1 }]);
      assert.equal(bad.status, 422);
      assert.deepEqual(errorsOf(bad.body, 0), [[1040, 'id']]);
      assert.deepEqual(errorsOf(bad.body, 1), [[1041, 'id']]);
      assert.deepEqual(errorsOf(bad.body, 2), [[1042, 'active']]);
      const dup = await patch(a, [
        { id, firstName: 'A' },
        { id, firstName: 'B' },
      ]);
      assert.deepEqual(dup.body.metadata.invalidItems, [1]);
      const viaItem = await call(t.app, a.token, 'PATCH', `/users/${id}`, { users: [{ lastName: 'ByUrl' }] });
      assert.equal(viaItem.body.users[0].lastName, 'ByUrl');
      const mismatch = await call(t.app, a.token, 'PATCH', `/users/${id}`, {
        users: [{ id: a.adminId, lastName: 'x' }],
      });
      assert.equal(mismatch.status, 422);
    });

    test('a deleted user loses their tokens', async () => {
      const id = (await post(a, [newUser(a.accountId)])).body.users[0].id;
      const token = await a.tokenFor(id, ['users.read']);
      assert.equal((await call(t.app, token, 'GET', '/users')).status, 200);
      await patch(a, [{ id, deleted: true }]);
      assert.equal((await call(t.app, token, 'GET', '/users')).status, 401);
    });

    test('DELETE is physical, answers [{id}], refuses self-deletion', async () => {
      const ids = (await post(a, [newUser(a.accountId), newUser(a.accountId)])).body.users.map(
        (u: { id: number }) => u.id,
      );
      const r = await call(t.app, a.token, 'DELETE', '/users', { users: ids.map((id: number) => ({ id })) });
      assert.equal(r.status, 200, r.raw);
      assert.deepEqual(
        r.body.users,
        ids.map((id: number) => ({ id })),
      );
      assert.deepEqual(r.body.metadata, { receivedItemsCount: 2, validItems: [0, 1], invalidItems: [] });
      assert.equal((await call(t.app, a.token, 'GET', `/users/${ids[0]}`)).status, 404);
      const self = await call(t.app, a.token, 'DELETE', `/users/${a.adminId}`);
      assert.equal(self.status, 403);
      const again = await call(t.app, a.token, 'DELETE', '/users', { users: [{ id: ids[0] }] });
      assert.equal(again.status, 422);
      assert.deepEqual(errorsOf(again.body), [[1047, 'id']]);
      const extra = await call(t.app, a.token, 'DELETE', '/users', { users: [{ id: a.adminId, firstName: 'x' }] });
      assert.deepEqual(errorsOf(extra.body), [[1043, 'firstName']]);
    });

    test("tenant isolation: another account's ids look missing and stay unchanged", async () => {
      const bUser = (await post(b, [newUser(b.accountId, { firstName: 'Bee' })])).body.users[0];
      assert.equal((await call(t.app, a.token, 'GET', `/users/${bUser.id}`)).status, 404);
      const list = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent('firstName = "Bee"')}`);
      assert.deepEqual(list.body.users, []);
      const p = await patch(a, [{ id: bUser.id, firstName: 'Hacked' }]);
      assert.equal(p.status, 422);
      assert.deepEqual(errorsOf(p.body), [[1047, 'id']]);
      const d = await call(t.app, a.token, 'DELETE', `/users/${bUser.id}`);
      assert.equal(d.status, 422);
      const still = await call(t.app, b.token, 'GET', `/users/${bUser.id}`);
      assert.equal(still.body.users[0].firstName, 'Bee');
    });

    test('roles: Employee edits only themself; Contractor reads only themself', async () => {
      const [emp, con] = (
        await post(a, [
          newUser(a.accountId, { firstName: 'Emp' }),
          newUser(a.accountId, { firstName: 'Con', role: { id: a.roleIds.contractor } }),
        ])
      ).body.users;
      const empToken = await a.tokenFor(emp.id);
      const conToken = await a.tokenFor(con.id);
      assert.equal(
        (await call(t.app, empToken, 'PATCH', '/users', { users: [{ id: emp.id, lastName: 'Self' }] })).status,
        200,
      );
      const other = await call(t.app, empToken, 'PATCH', '/users', { users: [{ id: a.adminId, lastName: 'Nope' }] });
      assert.equal(other.status, 403);
      assert.equal(other.body.error.code, 1021);
      assert.equal(
        (
          await call(t.app, empToken, 'PATCH', '/users', {
            users: [{ id: emp.id, role: { id: a.roleIds.administrator } }],
          })
        ).status,
        403,
      );
      assert.equal((await call(t.app, empToken, 'POST', '/users', { users: [newUser(a.accountId)] })).status, 403);
      assert.ok((await call(t.app, empToken, 'GET', '/users')).body.metadata.recordsCount > 2);
      const conList = await call(t.app, conToken, 'GET', '/users');
      assert.deepEqual(
        conList.body.users.map((u: { id: number }) => u.id),
        [con.id],
      );
      assert.equal((await call(t.app, conToken, 'GET', `/users/${a.adminId}`)).status, 404);
      assert.equal(
        (await call(t.app, conToken, 'PATCH', '/users', { users: [{ id: con.id, lastName: 'x' }] })).status,
        403,
      );
      const restoreByEmp = await call(t.app, empToken, 'PATCH', '/users', { users: [{ id: emp.id, deleted: false }] });
      assert.equal(restoreByEmp.status, 403);
    });
  });
}
