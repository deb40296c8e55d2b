import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import {
  DIALECTS,
  call,
  createTenant,
  createTestApp,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../test/helpers.js';
import { eventsRecorded, sharedOf } from './runner.js';

/**
 * A commit that recorded events tells this process's listeners its accounts (runner.ts
 * `committed`): where the database cannot notify, `subscribeCommits` (commits.ts) tells live
 * streams at once. A rolled-back transaction, or one that recorded nothing, tells nobody.
 */
for (const dialect of DIALECTS) {
  describe(`commits that recorded events are told (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    const told: number[][] = [];
    const listener = (accounts: ReadonlySet<number>) => void told.push([...accounts]);
    before(async () => {
      t = await createTestApp(dialect, { deliveries: false });
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
      sharedOf(t.database.db).eventsCommitted.add(listener);
    });
    after(() => t?.close());

    test('a write tells its account once, after its commit', async () => {
      told.length = 0;
      const res = await call(t.app, b.token, 'POST', '/clients', { clients: [{ name: 'One' }, { name: 'Two' }] });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(told, [[b.accountId]]);
    });

    test('a refused batch, a rolled-back transaction and a read tell nobody', async () => {
      told.length = 0;
      const refused = await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Fine' }, { nope: 1 }] });
      assert.equal(refused.status, 422, refused.raw);
      await assert.rejects(
        t.database.transaction(async (tx) => {
          eventsRecorded(tx, a.accountId);
          await sql`select 1`.execute(tx);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.equal((await call(t.app, a.token, 'GET', '/clients')).status, 200);
      await t.database.transaction(async (tx) => void (await sql`select 1`.execute(tx)));
      assert.deepEqual(told, []);
      // The same transaction committed is told.
      await t.database.transaction(async (tx) => eventsRecorded(tx, a.accountId));
      assert.deepEqual(told, [[a.accountId]]);
    });
  });
}
