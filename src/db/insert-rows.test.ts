import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, skipUnless, type TestApp } from '../../test/helpers.js';
import { insertRows, sharedOf } from './runner.js';

/**
 * insertRows (src/db/runner.ts): in a transaction, a large batch goes in by runs of a few sizes, so
 * the statements kept compiled (and prepared by the database) stay few whatever the batch sizes,
 * and what it returns is every row, in order, as one statement would have returned it.
 */
for (const dialect of DIALECTS) {
  describe(`insertRows in runs of a few sizes (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
      await sql`create table insert_runs (id integer primary key, n integer not null, label text)`.execute(
        t.database.db,
      );
    });
    after(async () => {
      await sql`drop table if exists insert_runs`.execute(t.database.db);
      await t?.close();
    });

    const shapes = (db: object) =>
      [...sharedOf(db).compiled.keys()].filter((k) => k.startsWith('insertRows|insert_runs|'));
    const rows = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ id: from + i, n: i, label: `row ${from + i}` }));

    test('every size from 1 to 300 in a transaction: all rows, in order, by at most 16 + 6 statement shapes', async () => {
      const db = t.database.db;
      let next = 1;
      for (let count = 1; count <= 300; count++) {
        const batch = rows(next, count);
        const back = await t.database.transaction((tx) =>
          insertRows<{ id: number; n: number }>(tx, 'insert_runs', batch, ['id', 'n']),
        );
        assert.deepEqual(
          back.map((r) => [Number(r.id), Number(r.n)]),
          batch.map((r) => [r.id, r.n]),
          `batch of ${count}`,
        );
        next += count;
      }
      const { c } = (await sql<{ c: number }>`select count(*) as c from insert_runs`.execute(db)).rows[0];
      assert.equal(Number(c), next - 1);
      // 1..16, then 32, 64, 128, 256 (300 = 256 + 32 + 12): one shape per size, not one per batch size.
      const sizes = shapes(db).map((k) => Number(k.split('|')[3]));
      assert.ok(sizes.length <= 16 + 6, `shapes: ${sizes.sort((a, b) => a - b).join(',')}`);
      assert.ok(
        sizes.every((n) => n <= 16 || Number.isInteger(Math.log2(n))),
        `sizes: ${sizes.join(',')}`,
      );
    });

    test('a refused row fails the whole batch in its transaction (nothing of the earlier runs stays)', async () => {
      const db = t.database.db;
      const before = Number((await sql<{ c: number }>`select count(*) as c from insert_runs`.execute(db)).rows[0].c);
      const batch = rows(1_000_000, 200);
      batch[150].id = 1; // taken: the primary key refuses it, in the third run
      await assert.rejects(t.database.transaction((tx) => insertRows(tx, 'insert_runs', batch)));
      const now = Number((await sql<{ c: number }>`select count(*) as c from insert_runs`.execute(db)).rows[0].c);
      assert.equal(now, before);
    });

    test('outside a transaction a batch goes in by one statement (all or nothing)', async () => {
      const db = t.database.db;
      const batch = rows(2_000_000, 37);
      batch[36].id = 1; // taken: the primary key refuses it
      await assert.rejects(insertRows(db, 'insert_runs', batch));
      const left = (await sql<{ c: number }>`select count(*) as c from insert_runs where id >= 2000000`.execute(db))
        .rows[0];
      assert.equal(Number(left.c), 0);
      assert.ok(shapes(db).some((k) => k.split('|')[3] === '37'));
    });
  });
}
