import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { passwordsHashed, verifyPassword } from '../../auth/secrets.js';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, newUser, skipUnless } from '../../../test/helpers.js';

/**
 * A password costs about half a second of CPU to hash (scrypt at OWASP's parameters): a write is
 * checked in full (ids, ownership, roles, unique values, If-Match) before any is hashed, so a batch
 * that fails costs none. Counted, not timed: `passwordsHashed` counts every hash of the process.
 */
for (const dialect of DIALECTS) {
  describe(
    `users: passwords are hashed only once the batch will be written (${dialect})`,
    { skip: skipUnless(dialect) },
    () => {
      const { t, a, b } = suiteWithTenants(dialect);

      const pw = (n: number) => ({ newPassword: `long enough pw ${n}`, newPasswordConfirm: `long enough pw ${n}` });
      /** The hashes `fn` made, and its answer. */
      async function hashesOf<T>(fn: () => Promise<T>): Promise<{ hashes: number; res: T }> {
        const before = passwordsHashed.count;
        const res = await fn();
        return { hashes: passwordsHashed.count - before, res };
      }
      const storedHashes = async (ids: number[]) =>
        (
          await t.database.db
            .selectFrom('users')
            .select(['id', 'password_hash'])
            .where('id', 'in', ids)
            .orderBy('id')
            .execute()
        ).map((r) => r.password_hash);

      test('ten made-up ids with newPassword: 422 for each, and no password hashed', async () => {
        const items = Array.from({ length: 10 }, (_, i) => ({ id: 1_900_000 + i, ...pw(i) }));
        const { hashes, res } = await hashesOf(() => call(t.app, a.token, 'PATCH', '/users', { users: items }));
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), Array(10).fill('1047:id'));
        assert.equal(hashes, 0);
      });

      test("another account's ids, with newPassword: not found, no password hashed", async () => {
        const { hashes, res } = await hashesOf(() =>
          call(t.app, a.token, 'PATCH', '/users', { users: [{ id: b.adminId, ...pw(1) }] }),
        );
        assert.equal(res.status, 422);
        assert.deepEqual(errorsOf(res), ['1047:id']);
        assert.equal(hashes, 0);
      });

      test('a login already taken, on create and on update: 422, no password hashed, nothing stored', async () => {
        const taken = await hashesOf(() =>
          call(t.app, a.token, 'POST', '/users', {
            users: [
              newUser(a.accountId, { login: `fresh-${dialect}-1`, ...pw(1) }),
              newUser(a.accountId, { login: b.login, ...pw(2) }),
            ],
          }),
        );
        assert.equal(taken.res.status, 422, taken.res.raw);
        assert.deepEqual(taken.res.body.metadata.invalidItems, [1]);
        assert.deepEqual(errorsOf(taken.res), ['1046:login']);
        assert.equal(taken.hashes, 0);
        const found = await call(t.app, a.token, 'GET', `/users?where=login="fresh-${dialect}-1"`);
        assert.equal(found.body.metadata.recordsCount, 0);

        const u = await addUser(t, a, 'employee');
        const update = await hashesOf(() =>
          call(t.app, a.token, 'PATCH', '/users', { users: [{ id: u.id, login: a.login, ...pw(3) }] }),
        );
        assert.equal(update.res.status, 422);
        assert.deepEqual(errorsOf(update.res), ['1046:login']);
        assert.equal(update.hashes, 0);
        assert.deepEqual(await storedHashes([u.id]), [null]);
      });

      test('a role that may not write the item (an Employee on another user): 403, no password hashed', async () => {
        const other = await addUser(t, a, 'employee', { login: `other-${dialect}`, ...pw(0) });
        const emp = await addUser(t, a, 'employee');
        const before = await storedHashes([other.id]);
        const { hashes, res } = await hashesOf(() =>
          call(t.app, emp.token, 'PATCH', '/users', { users: [{ id: other.id, ...pw(4) }] }),
        );
        assert.equal(res.status, 403);
        assert.equal(hashes, 0);
        assert.deepEqual(await storedHashes([other.id]), before);
      });

      test('a stale If-Match: 412, no password hashed', async () => {
        const u = await addUser(t, a, 'employee', { login: `etag-${dialect}`, ...pw(0) });
        const { hashes, res } = await hashesOf(() =>
          call(t.app, a.token, 'PATCH', `/users/${u.id}`, { users: [pw(5)] }, { 'if-match': '"stale"' }),
        );
        assert.equal(res.status, 412);
        assert.equal(hashes, 0);
      });

      test('a batch that passes: each new password hashed once, and the stored hash verifies', async () => {
        const u1 = await addUser(t, a, 'employee', { login: `ok1-${dialect}`, ...pw(0) });
        const u2 = await addUser(t, a, 'employee', { login: `ok2-${dialect}`, ...pw(0) });
        const { hashes, res } = await hashesOf(() =>
          call(t.app, a.token, 'PATCH', '/users', {
            users: [
              { id: u1.id, ...pw(6) },
              { id: u2.id, ...pw(7) },
            ],
          }),
        );
        assert.equal(res.status, 200, res.raw);
        assert.equal(hashes, 2);
        const [h1, h2] = await storedHashes([u1.id, u2.id]);
        assert.ok(await verifyPassword(pw(6).newPassword, h1));
        assert.ok(await verifyPassword(pw(7).newPassword, h2));
      });
    },
  );
}
