import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';
import { rowCount } from './counted.js';
import { createItemTable, createLinkTable } from './migrations/scheme.js';

/**
 * The helper new tables are made with (src/db/migrations/scheme.ts) gives them the key scheme on
 * both dialects, as behaviour: a link into another account is refused, each ON DELETE does what it
 * says (SET NULL nulls the link's column alone), versions move on every update, rows are counted.
 */
const refused = (e: { code?: string }) => e.code === '23503' || e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';

for (const dialect of DIALECTS) {
  describe(`tables made by createItemTable (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    let db: Kysely<any>;
    const ids: Record<string, number> = {};

    before(async () => {
      t = await createTestDb(dialect);
      db = t.database.db as Kysely<any>;
      await createItemTable(db, dialect, 'scheme_parents', (c) => c.addColumn('name', 'text', (x) => x.notNull()), {
        counted: true,
      });
      await createItemTable(
        db,
        dialect,
        'scheme_children',
        (c) =>
          c
            .addColumn('parent_id', 'integer', (x) => x.notNull())
            .addColumn('other_id', 'integer')
            .addColumn('kept_id', 'integer'),
        {
          links: [
            { column: 'parent_id', table: 'scheme_parents', onDelete: 'cascade' },
            { column: 'other_id', table: 'scheme_parents', onDelete: 'set null' },
            { column: 'kept_id', table: 'scheme_parents', onDelete: 'restrict' },
          ],
        },
      );
      await createLinkTable(
        db,
        dialect,
        'scheme_links',
        { column: 'parent_id', table: 'scheme_parents' },
        { column: 'child_id', table: 'scheme_children' },
      );
      for (const a of ['a', 'b'])
        ids[a] = (
          await db
            .insertInto('accounts')
            .values({ company_name: a, created: 0, modified: 0 })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      for (const p of ['a1', 'a2', 'a3', 'a4', 'b1'])
        ids[p] = (
          await db
            .insertInto('scheme_parents')
            .values({ account_id: ids[p[0]], name: p })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
    });
    after(() => t?.close());

    const child = (values: Record<string, unknown>) =>
      db
        .insertInto('scheme_children')
        .values({ account_id: ids.a, ...values })
        .returning('id')
        .executeTakeFirstOrThrow();

    test('a link into another account is refused', async () => {
      await assert.rejects(child({ parent_id: ids.b1 }), refused);
      await assert.rejects(child({ parent_id: ids.a1, other_id: ids.b1 }), refused);
      const made = await child({ parent_id: ids.a1 });
      await assert.rejects(
        db.insertInto('scheme_links').values({ account_id: ids.b, parent_id: ids.b1, child_id: made.id }).execute(),
        refused,
      );
    });

    test('ON DELETE: cascade, SET NULL of the link alone, restrict; versions move', async () => {
      const { id } = await child({ parent_id: ids.a1, other_id: ids.a2, kept_id: ids.a3 });
      await db.insertInto('scheme_links').values({ account_id: ids.a, parent_id: ids.a4, child_id: id }).execute();
      const row = () => db.selectFrom('scheme_children').selectAll().where('id', '=', id).executeTakeFirst();
      assert.equal((await row())!.version, 1);
      await db.deleteFrom('scheme_parents').where('account_id', '=', ids.a).where('id', '=', ids.a2).execute();
      assert.deepEqual(
        { ...(await row()) },
        { id, account_id: ids.a, parent_id: ids.a1, other_id: null, kept_id: ids.a3, version: 2 },
      );
      await assert.rejects(
        db.deleteFrom('scheme_parents').where('account_id', '=', ids.a).where('id', '=', ids.a3).execute(),
        refused,
      );
      await db.deleteFrom('scheme_parents').where('account_id', '=', ids.a).where('id', '=', ids.a4).execute();
      assert.deepEqual(await db.selectFrom('scheme_links').selectAll().where('child_id', '=', id).execute(), []);
      await db.deleteFrom('scheme_parents').where('account_id', '=', ids.a).where('id', '=', ids.a1).execute();
      assert.equal(await row(), undefined, 'deleted with its parent');
      const counted = await rowCount(t.database.db, 'scheme_parents', ids.a).executeTakeFirstOrThrow();
      assert.equal(Number(counted.value), 1, 'a3 is left');
    });

    test('keyed by (account_id, id)', async () => {
      const { rows } =
        dialect === 'postgres'
          ? await sql<{
              cols: string;
            }>`select array_to_string(array(select a.attname from unnest(x.indkey) with ordinality k(n, i)
              join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.n order by k.i), ',') as cols
              from pg_index x where x.indrelid = 'scheme_children'::regclass and x.indisprimary`.execute(db)
          : await sql<{ cols: string }>`select (select group_concat(name) from pragma_index_info(l.name)) as cols
              from pragma_index_list('scheme_children') l where l."unique"`.execute(db);
      assert.deepEqual(
        rows.map((r) => r.cols),
        ['account_id,id'],
      );
    });
  });
}
