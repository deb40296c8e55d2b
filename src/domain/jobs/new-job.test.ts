import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, call, suiteWithTenants, skipUnless } from '../../../test/helpers.js';
import { withTransaction } from '../../db/tx.js';
import { defaultStatus, nextReference, nextReferences } from './new-job.js';

/** A new job's reference and status, whoever makes it (POST /jobs, an agreement's occurrences). */
for (const dialect of DIALECTS) {
  describe(`new job (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    it("draws the account's next references, skipping those given by hand, per account", async () => {
      // The counter stands at 1 after this job; J-000002 and J-000004 are taken by hand.
      assert.equal((await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'first' }] })).status, 200);
      for (const reference of ['J-000002', 'J-000004'])
        assert.equal(
          (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'by hand', reference }] })).status,
          200,
        );
      const drawn = await withTransaction(t.database, async (tx) => [
        ...(await nextReferences(tx, a.accountId, 3)),
        await nextReference(tx, a.accountId),
      ]);
      // Three drawn at once are J-000002..4; each taken one is replaced, in its place, by the next free one.
      assert.deepEqual(drawn, ['J-000005', 'J-000003', 'J-000006', 'J-000007']);
      // Another account's counter is its own.
      assert.deepEqual(await withTransaction(t.database, (tx) => nextReferences(tx, b.accountId, 1)), ['J-000001']);
    });

    it("answers the account's default status", async () => {
      const statuses = (await call(t.app, a.token, 'GET', '/statuses?recordsPerPage=100')).body.statuses;
      const wanted = statuses.find((s: { isDefault: boolean }) => s.isDefault).id;
      assert.equal(await defaultStatus(t.database.db, a.accountId), wanted);
    });
  });
}
