import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { DIALECTS, suiteWithTenants, call, newUser, skipUnless } from '../../../../test/helpers.js';

/**
 * Concurrent batches of one account (src/collections/machinery/write/lock-rows.ts, migration 012):
 * they do not deadlock whatever order they name their rows in, the row counts stay exact, and on
 * PostgreSQL a writer never waits on another transaction's row count.
 */
for (const dialect of DIALECTS) {
  describe(`concurrent batches of one account (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);

    const recordsCount = async (collection: string) =>
      (await call(t.app, a.token, 'GET', `/${collection}`)).body.metadata.recordsCount as number;
    const counted = async (table: string) =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(*) as n from ${sql.table(table)} where account_id = ${a.accountId}`.execute(t.database.db)
        ).rows[0].n,
      );

    it('batches updating the same rows in opposite orders all succeed (no deadlock)', async () => {
      const made = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: Array.from({ length: 20 }, (_, i) => ({ title: `Job ${i}` })),
      });
      assert.equal(made.status, 200, made.raw);
      const ids: number[] = made.body.jobs.map((j: { id: number }) => j.id);
      const batches = Array.from({ length: 12 }, (_, n) => {
        const order = n % 2 ? [...ids].reverse() : ids;
        return call(t.app, a.token, 'PATCH', '/jobs', { jobs: order.map((id) => ({ id, orderNumber: `PO-${n}` })) });
      });
      const answers = await Promise.all(batches);
      for (const r of answers) assert.equal(r.status, 200, r.raw);
      // Every batch wrote every row: each job's version moved once per batch.
      const versions = await t.database.db.selectFrom('jobs').select('version').where('id', 'in', ids).execute();
      for (const v of versions) assert.equal(Number(v.version), 1 + batches.length);
      assert.equal(await recordsCount('jobs'), await counted('jobs'));
    });

    it('deletes naming the same rows in opposite orders: one wins per row, the others find them gone', async () => {
      const made = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: Array.from({ length: 10 }, (_, i) => ({ title: `Gone ${i}` })),
      });
      const ids: number[] = made.body.jobs.map((j: { id: number }) => j.id);
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          call(t.app, a.token, 'DELETE', '/jobs', { jobs: (n % 2 ? [...ids].reverse() : ids).map((id) => ({ id })) }),
        ),
      );
      for (const r of answers) assert.ok(r.status === 200 || r.status === 422, r.raw);
      assert.equal(answers.filter((r) => r.status === 200).length, 1);
      assert.equal(await recordsCount('jobs'), await counted('jobs'));
    });

    it('concurrent creates keep the count exact', async () => {
      const answers = await Promise.all(
        Array.from({ length: 16 }, () =>
          call(t.app, a.token, 'POST', '/users', { users: Array.from({ length: 5 }, () => newUser(a.accountId)) }),
        ),
      );
      for (const r of answers) assert.equal(r.status, 200, r.raw);
      assert.equal(await recordsCount('users'), await counted('users'));
      if (dialect === 'postgres') {
        // Spread over the pool's connections, each with its slot.
        const slots = await t.database.db
          .selectFrom('row_counts')
          .select('slot')
          .where('account_id', '=', a.accountId)
          .where('tbl', '=', 'users')
          .execute();
        assert.ok(slots.length > 1, `slots: ${JSON.stringify(slots)}`);
      }
    });

    // PostgreSQL only: SQLite runs one write transaction at a time.
    if (dialect === 'postgres')
      it('a create does not wait for another open transaction that changed the same table', async () => {
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        let open!: () => void;
        const opened = new Promise<void>((resolve) => (open = resolve));
        // Another connection inserts a user (its count slot bumped) and stays open until told.
        const other = t.database.db.transaction().execute(async (tx) => {
          const now = Date.now();
          const role = await tx
            .selectFrom('roles')
            .select('id')
            .where('account_id', '=', a.accountId)
            .where('kind', '=', 'employee')
            .executeTakeFirstOrThrow();
          await tx
            .insertInto('users')
            .values({
              account_id: a.accountId,
              role_id: role.id,
              first_name: 'Held',
              last_name: 'Open',
              mobile: '+447700900123',
              active: 1,
              deleted: 0,
              created: now,
              modified: now,
            } as never)
            .execute();
          open();
          await released;
        });
        await opened;
        let createdFirst = false;
        const create = call(t.app, a.token, 'POST', '/users', { users: [newUser(a.accountId)] }).then(
          (r) => ((createdFirst = true), r),
        );
        // Only a guard against hanging: the create either finishes while the other is open, or the test fails.
        await Promise.race([create, sleep(10_000)]);
        release();
        await other;
        assert.ok(createdFirst, 'the create waited for the other transaction');
        assert.equal((await create).status, 200);
        assert.equal(await recordsCount('users'), await counted('users'));
      });
  });
}
