import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, newUser, skipUnless } from './helpers.js';

/**
 * Every integer that reaches SQL is range-checked first: ids are PostgreSQL `serial` (int4) and
 * SQLite is held to the same range, so the answer is the same on both dialects and never a 500
 * from an out-of-range parameter. Items: 422 naming the field; modifiers: 400; path ids: 404.
 */
const EDGES = [2 ** 31, 2 ** 53 - 1, 2147483647999];
const RAW_EDGES = ['9223372036854775808', '9223372036854775807', '99999999999999999999999'];

for (const dialect of DIALECTS) {
  describe(`integers at and past the storage range (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    it('association ids past the range are a validation failure naming the field (the reported 500)', async () => {
      for (const id of [...EDGES, -1, 0]) {
        const res = await call(t.app, a.token, 'POST', '/users', { users: [newUser(a.accountId, { role: { id } })] });
        assert.equal(res.status, 422, `role.id ${id}: ${res.raw}`);
        assert.deepEqual(errorsOf(res), ['1044:role']);
      }
      for (const raw of RAW_EDGES) {
        const body = `{"users":[{"account":{"id":${a.accountId}},"firstName":"a","lastName":"b","mobile":"+447700900001","role":{"id":${raw}}}]}`;
        const res = await call(t.app, a.token, 'POST', '/users', body);
        assert.equal(res.status, 422, `${raw}: ${res.raw}`);
        assert.deepEqual(errorsOf(res), ['1044:role']);
      }
      const acc = await call(t.app, a.token, 'POST', '/users', { users: [newUser(2 ** 31)] });
      assert.equal(acc.status, 422, acc.raw);
      assert.deepEqual(errorsOf(acc), ['1044:account']);
      // The largest id that can exist is well-formed: it simply does not exist.
      const max = await call(t.app, a.token, 'POST', '/users', {
        users: [newUser(a.accountId, { role: { id: 2 ** 31 - 1 } })],
      });
      assert.equal(max.status, 422, max.raw);
      assert.deepEqual(errorsOf(max), ['1045:role']);
    });

    it('association lists, nullable associations and PATCH/DELETE ids', async () => {
      for (const id of EDGES) {
        const wg = await call(t.app, a.token, 'POST', '/workgroups', {
          workgroups: [{ name: `Crew ${id}`, users: [{ id: a.adminId }, { id }] }],
        });
        assert.equal(wg.status, 422, wg.raw);
        assert.deepEqual(errorsOf(wg), ['1044:users']);
        const job = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'x', client: { id } }] });
        assert.equal(job.status, 422, job.raw);
        assert.deepEqual(errorsOf(job), ['1044:client']);
        for (const method of ['PATCH', 'DELETE']) {
          const res = await call(t.app, a.token, method, '/users', {
            users: [{ id, ...(method === 'PATCH' ? { firstName: 'x' } : {}) }],
          });
          assert.equal(res.status, 422, `${method} id ${id}: ${res.raw}`);
          assert.deepEqual(errorsOf(res), ['1041:id']);
        }
      }
      const u = await addUser(t, a);
      const ok = await call(t.app, a.token, 'PATCH', '/users', {
        users: [{ id: u.id, role: { id: a.roleIds.contractor } }],
      });
      assert.equal(ok.status, 200, ok.raw);
    });

    it('an id in the path that cannot exist is 404 for every method', async () => {
      for (const id of ['2147483648', '9007199254740991', ...RAW_EDGES, '0']) {
        for (const method of ['GET', 'PATCH', 'DELETE']) {
          const res = await call(
            t.app,
            a.token,
            method,
            `/users/${id}`,
            method === 'PATCH' ? { users: [{ firstName: 'x' }] } : undefined,
          );
          assert.equal(res.status, 404, `${method} /users/${id}: ${res.raw}`);
          assert.equal(res.body.error.code, 1031);
        }
      }
      assert.equal((await call(t.app, a.token, 'GET', '/users/2147483647')).status, 404);
    });

    it('where values past an integer column are 400; in range they compare', async () => {
      for (const v of [...EDGES.map(String), ...RAW_EDGES, '-2147483649', '-9223372036854775809', '1e300']) {
        for (const field of ['id', 'role.id', 'active', 'account.id']) {
          const res = await call(t.app, a.token, 'GET', `/users?where=${encodeURIComponent(`${field} < ${v}`)}`);
          assert.equal(res.status, 400, `${field} < ${v}: ${res.raw}`);
          assert.equal(res.body.error.code, 1002);
          assert.match(res.body.error.message, new RegExp(`'${field.replace('.', '\\.')}'.*-2147483648 to 2147483647`));
        }
      }
      for (const v of ['2147483647', '-2147483648', '0']) {
        const res = await call(
          t.app,
          a.token,
          'GET',
          `/users?where=${encodeURIComponent(`id < ${v} or role.id = ${v}`)}`,
        );
        assert.equal(res.status, 200, `${v}: ${res.raw}`);
      }
      // files.size is a bigint column: the whole safe-integer range compares.
      const big = await call(t.app, a.token, 'GET', `/files?where=${encodeURIComponent('size < 9007199254740991')}`);
      assert.equal(big.status, 200, big.raw);
      assert.equal(
        (await call(t.app, a.token, 'GET', `/files?where=${encodeURIComponent('size < 9223372036854775808')}`)).status,
        400,
      );
    });

    it('page and recordsPerPage past their range are 400; the largest page reads empty', async () => {
      for (const q of [
        'page=2147483648',
        'page=9223372036854775808',
        'recordsPerPage=2147483648',
        'page=-1',
        'page=0',
      ]) {
        const res = await call(t.app, a.token, 'GET', `/users?${q}`);
        assert.equal(res.status, 400, `${q}: ${res.raw}`);
        assert.equal(res.body.error.code, 1002);
      }
      const last = await call(t.app, a.token, 'GET', '/users?page=1000000000&recordsPerPage=1000');
      assert.equal(last.status, 200, last.raw);
      assert.deepEqual(last.body.users, []);
    });

    it('integer and number fields at their edges: 422 naming the field, never a 500', async () => {
      for (const raw of ['2147483648', '9223372036854775808', '1e309', '-1', '1e13']) {
        const body = `{"users":[{"account":{"id":${a.accountId}},"firstName":"a","lastName":"b","mobile":"+447700900001","hourlyRate":${raw}}]}`;
        const res = await call(t.app, a.token, 'POST', '/users', body);
        if (raw === '2147483648') {
          assert.equal(res.status, 200, res.raw);
          await call(t.app, a.token, 'DELETE', '/users', { users: [{ id: res.body.users[0].id }] });
          continue;
        }
        assert.equal(res.status, 422, `${raw}: ${res.raw}`);
        assert.deepEqual(errorsOf(res), ['1041:hourlyRate']);
      }
      for (const v of [2 ** 31, 2 ** 53, 2 ** 63, -(2 ** 31) - 1]) {
        const res = await call(t.app, a.token, 'PATCH', '/users', { users: [{ id: a.adminId, active: v }] });
        assert.equal(res.status, 422, res.raw);
      }
    });

    it('a timesheet entry longer than 2147483647 seconds is 422 naming endTime (the reported 500 and 6311433600)', async () => {
      const post = (items: unknown[]) => call(t.app, a.token, 'POST', '/timesheets', { timesheets: items });
      // 1970 to 2100: 130 years, past the int4 duration on both databases.
      for (const [startTime, endTime] of [
        ['1970-01-01T00:00:00Z', '2100-01-01T00:00:00Z'],
        ['2000-01-01T00:00:00Z', '2068-01-19T03:14:08Z'],
        ['2000-01-01T00:00:00+14:00', '9999-12-31T23:59:59Z'],
      ]) {
        const res = await post([{ startTime, endTime }]);
        assert.equal(res.status, 422, `${startTime}..${endTime}: ${res.raw}`);
        assert.deepEqual(errorsOf(res), ['1041:endTime']);
        assert.match(res.body.failures[0].errors[0].message, /at most 2147483647 seconds after startTime/);
      }
      // The longest entry there can be: exactly 2147483647 seconds (and 999 ms, rounded down).
      const longest = await post([{ startTime: '2000-01-01T00:00:00Z', endTime: '2068-01-19T03:14:07.999Z' }]);
      assert.equal(longest.status, 200, longest.raw);
      const entry = longest.body.timesheets[0];
      assert.equal(entry.duration, 2147483647);
      // A PATCH that stretches a stored entry is held to the same bound, naming what it sent.
      const stretched = await call(t.app, a.token, 'PATCH', '/timesheets', {
        timesheets: [{ id: entry.id, startTime: '1999-12-31T23:59:59Z' }],
      });
      assert.equal(stretched.status, 422, stretched.raw);
      assert.deepEqual(errorsOf(stretched), ['1041:startTime']);
      const running = await post([{ startTime: '2070-01-01T00:00:00Z' }]);
      assert.equal(running.status, 200, running.raw);
      const ended = await call(t.app, a.token, 'PATCH', '/timesheets', {
        timesheets: [{ id: running.body.timesheets[0].id, endTime: '9999-01-01T00:00:00Z' }],
      });
      assert.equal(ended.status, 422, ended.raw);
      assert.deepEqual(errorsOf(ended), ['1041:endTime']);
      const stored = await call(t.app, a.token, 'GET', `/timesheets?where=${encodeURIComponent(`id = ${entry.id}`)}`);
      assert.equal(stored.body.timesheets[0].duration, 2147483647);
    });

    it('date-times outside 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z are 422 naming the field, on every collection', async () => {
      const range = /must be a date-time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59\.999Z/;
      for (const v of [
        '1900-01-01T00:00:00Z',
        '1969-12-31T23:59:59.999Z',
        '1970-01-01T00:30:00+01:00',
        '0000-01-01T00:00:00Z',
        '9999-12-31T23:00:00-05:00',
      ]) {
        for (const [collection, item, field] of [
          ['timesheets', { startTime: v }, 'startTime'],
          ['timesheets', { startTime: '2030-01-01T00:00:00Z', endTime: v }, 'endTime'],
          ['unavailabilities', { user: { id: a.adminId }, startTime: v, endTime: '2030-01-01T00:00:00Z' }, 'startTime'],
          ['locations', { lat: 1, lng: 1, recordedAt: v }, 'recordedAt'],
        ] as const) {
          const res = await call(t.app, a.token, 'POST', `/${collection}`, { [collection]: [item] });
          assert.equal(res.status, 422, `${collection}.${field} ${v}: ${res.raw}`);
          assert.ok(errorsOf(res).includes(`1041:${field}`), `${collection}.${field} ${v}: ${res.raw}`);
          const error = res.body.failures[0].errors.find((e: { field: string }) => e.field === field);
          assert.match(error.message, range);
        }
        const status = await call(t.app, a.token, 'PATCH', '/users', {
          users: [{ id: a.adminId, status: { message: 'x', timestamp: v } }],
        });
        assert.equal(status.status, 422, `status.timestamp ${v}: ${status.raw}`);
        assert.deepEqual(errorsOf(status), ['1041:status']);
        assert.match(
          status.body.failures[0].errors[0].message,
          /from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59\.999Z at 'timestamp'/,
        );
      }
      // The range's own ends are accepted, in any offset.
      for (const [startTime, endTime] of [
        ['1970-01-01T00:00:00Z', '1970-01-01T02:00:00+01:00'],
        ['9999-12-31T22:00:00Z', '9999-12-31T23:59:59.999Z'],
      ]) {
        const res = await call(t.app, a.token, 'POST', '/unavailabilities', {
          unavailabilities: [{ user: { id: a.adminId }, startTime, endTime }],
        });
        assert.equal(res.status, 200, `${startTime}..${endTime}: ${res.raw}`);
      }
    });
  });
}
