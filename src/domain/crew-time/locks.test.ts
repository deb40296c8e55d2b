import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DIALECTS,
  addUser,
  createTenant,
  createTestApp,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../../test/helpers.js';
import { lockUsersTime, overlappingEntries } from './locks.js';

/**
 * Crew time's two rules (PRODUCT §11): a writer of a user's entries holds that user's time until it
 * commits, and the overlap search sees every live entry touching `[start, end)`, the running one
 * included, but not one that ends where the next starts.
 */
for (const dialect of DIALECTS) {
  describe(`crew time (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    let user: number;
    let other: number;
    const H = 3_600_000;
    const T0 = Date.UTC(2026, 0, 5, 8);

    before(async () => {
      t = await createTestApp(dialect, { deliveries: false });
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
      user = (await addUser(t, a, 'contractor', { firstName: 'Crew' })).id;
      other = (await addUser(t, b, 'contractor', { firstName: 'Elsewhere' })).id;
      const row = (accountId: number, userId: number, start: number, end: number | null, deleted = 0) => ({
        account_id: accountId,
        user_id: userId,
        start_time: start,
        end_time: end,
        deleted,
        created: T0,
        modified: T0,
      });
      await t.database.transaction(async (tx) => {
        for (const r of [
          row(a.accountId, user, T0, T0 + H), // 08–09
          row(a.accountId, user, T0 + 2 * H, null), // 10– (running)
          row(a.accountId, user, T0 + H, T0 + 2 * H, 1), // 09–10, deleted
          row(b.accountId, other, T0, T0 + 8 * H), // another account's
        ])
          await tx.insertInto('timesheets').values(r).execute();
      });
    });
    after(() => t?.close());

    test('overlaps: live entries only, the running one reaches forward, touching ends are no overlap', async () => {
      const db = t.database.db;
      const ids = async (start: number, end: number | null) =>
        (await overlappingEntries(db, a.accountId, user, start, end)).length;
      assert.equal(await ids(T0 + H, T0 + 2 * H), 0, '09–10 touches both neighbours and the deleted one is gone');
      assert.equal(await ids(T0 + H - 1, T0 + H + 1), 1, 'one millisecond into 08–09');
      assert.equal(await ids(T0 + 5 * H, T0 + 6 * H), 1, 'the running entry reaches 13–14');
      assert.equal(await ids(T0 - H, null), 2, 'a running entry from 07 meets both');
      assert.equal(await ids(T0 - 2 * H, T0 - H), 0);
      const [first] = await overlappingEntries(db, a.accountId, user, T0, T0 + H);
      assert.deepEqual(await overlappingEntries(db, a.accountId, user, T0, T0 + H, first), []);
      // Another account's user id is never looked at through this account.
      assert.deepEqual(await overlappingEntries(db, a.accountId, other, T0, T0 + H), []);
    });

    test('a second writer of the same user waits for the first to commit', async () => {
      if (t.database.dialect.serialWriters) {
        // SQLite runs writers one at a time: nothing to lock, and the call is a no-op.
        await lockUsersTime(t.database.db, a.accountId, [user]);
        return;
      }
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const firstLocked = new Promise<void>((r) => (locked = r));
      const first = t.database.transaction(async (tx) => {
        await lockUsersTime(tx, a.accountId, [user, user]);
        locked();
        await held;
        order.push('first commits');
      });
      await firstLocked;
      const second = t.database.transaction(async (tx) => {
        await lockUsersTime(tx, a.accountId, [user]);
        order.push('second locked');
      });
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(order, [], 'the second waits while the first holds the user');
      release();
      await Promise.all([first, second]);
      assert.deepEqual(order, ['first commits', 'second locked']);
    });
  });
}
