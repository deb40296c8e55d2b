import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { DIALECTS, call, skipUnless, suiteWithTenants, type TestApp } from './helpers.js';

const EARLY = /the suite fixture is used before its before\(\) ran/;

for (const dialect of DIALECTS) {
  describe(`suiteWithTenants (${dialect})`, { skip: skipUnless(dialect) }, () => {
    // The real app behind the stand-in, kept for the check after the fixture's suite has ended.
    let real: TestApp | undefined;

    describe('the fixture', () => {
      const { t, a, b } = suiteWithTenants(dialect);
      // Touched while the suite is being defined, before any hook ran: each one throws.
      const early: unknown[] = [];
      const touch = (fn: () => unknown) => {
        try {
          fn();
          early.push('no error');
        } catch (e) {
          early.push(e);
        }
      };
      touch(() => t.app);
      touch(() => a.token);
      touch(() => 'token' in b);
      touch(() => Object.keys(a));
      touch(() => ({ ...b }));
      touch(() => ((t as unknown as Record<string, unknown>).marker = 1));

      let seenInOwnBefore: number | undefined;
      before(() => {
        // The fixture's before was registered first, so it has run.
        seenInOwnBefore = a.accountId;
      });

      it('throws a clear error when touched before its before() ran', () => {
        assert.equal(early.length, 6);
        for (const e of early) {
          assert.ok(e instanceof Error, String(e));
          assert.match(e.message, EARLY);
        }
      });

      it("is ready in the suite's own before hooks", () => {
        assert.equal(typeof seenInOwnBefore, 'number');
        assert.equal(seenInOwnBefore, a.accountId);
      });

      it('forwards reads, `in`, keys and spreads to the app and the two tenants', async () => {
        real = t.valueOf() as TestApp;
        assert.notEqual(real, t, 'valueOf is bound to the real app, not called on the stand-in');
        assert.equal(t.app, real.app);
        assert.equal(t.database, real.database);
        assert.ok('app' in t);
        assert.ok(!('nothing' in t));
        assert.deepEqual(Object.keys(t), Object.keys(real));

        const realA = a.valueOf() as typeof a;
        assert.notEqual(realA, a);
        assert.deepEqual(Object.keys(a), [
          'accountId',
          'adminId',
          'login',
          'password',
          'clientId',
          'token',
          'roleIds',
          'tokenFor',
        ]);
        assert.deepEqual(Object.keys(a), Object.keys(realA));
        const spread = { ...a };
        assert.equal(spread.token, realA.token);
        assert.equal(typeof spread.tokenFor, 'function');
        assert.deepEqual(spread.roleIds, realA.roleIds);
        assert.equal(JSON.parse(JSON.stringify(a)).accountId, realA.accountId);
        const { accountId, token } = b;
        assert.equal(typeof accountId, 'number');
        assert.notEqual(accountId, a.accountId, 'a and b are two accounts');
        assert.notEqual(token, a.token);

        const users = await call(t.app, a.token, 'GET', '/users');
        assert.equal(users.status, 200, users.raw);
        assert.ok(users.body.users.some((u: { id: number }) => u.id === a.adminId));
        const theirs = await call(t.app, b.token, 'GET', `/users/${a.adminId}`);
        assert.equal(theirs.status, 404, theirs.raw);
      });

      it('forwards writes and calls methods on the real objects', async () => {
        assert.ok(real);
        const stand = t as unknown as Record<string, unknown>;
        stand.marker = 42;
        assert.equal((real as unknown as Record<string, unknown>).marker, 42);
        assert.equal(stand.marker, 42);
        assert.ok(delete stand.marker);
        assert.ok(!('marker' in real));

        // A method that reads `this` sees the real app, called on the stand-in or taken off it.
        (real as unknown as Record<string, unknown>).self = function (this: unknown) {
          return this;
        };
        const self = stand.self as () => unknown;
        assert.equal((stand.self as () => unknown)(), real);
        assert.equal(self(), real);
        assert.equal(stand.self, stand.self, 'the same bound function each time');

        // The tenant's own method, through the stand-in: a token that works for its account.
        const token = await a.tokenFor(a.adminId, ['users.read']);
        const me = await call(t.app, token, 'GET', `/users/${a.adminId}`);
        assert.equal(me.status, 200, me.raw);
        assert.equal(typeof t.close, 'function');
      });
    });

    it('its after() closed the app: the database is closed and its directory gone', async () => {
      assert.ok(real, 'the fixture suite ran');
      assert.equal(fs.existsSync(real.dataDir), false);
      await assert.rejects(real.database.db.selectFrom('accounts').select('id').execute());
    });
  });
}
