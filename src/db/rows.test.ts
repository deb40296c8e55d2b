import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase } from './index.js';
import { query, slot } from './runner.js';

/**
 * SQLite's direct runner reads rows as arrays and makes their objects with a function compiled per
 * statement (src/db/index.ts): the rows must be exactly what better-sqlite3 gives as objects, and
 * Kysely's own path, which shares the cached statement, must still get objects.
 */
test('SQLite rows read as arrays are the objects better-sqlite3 makes', async () => {
  const database = openDatabase({ sqliteFile: ':memory:' });
  const db = database.db;
  try {
    await sql`create table t (id integer primary key, name text, n real, b blob, "odd ""name""" text)`.execute(db);
    await sql`insert into t values (1, 'one', 1.5, x'00ff', 'q'), (2, null, null, null, null)`.execute(db);
    const cases: [string, string][] = [
      ['named', `select id, name, n, b, "odd ""name""" from t where id >= ? order by id`],
      ['repeated name', `select id, name as id, n from t where id >= ? order by id`],
      ['star', `select * from t where id >= ? order by id`],
      ['qualified star', `select "t".* from t where id >= ? order by id`],
      ['count(*)', `select count(*) as c, max(id) as m from t where id >= ?`],
      ['a product', `select id * 2 as d from t where id >= ? order by id`],
      ['unquoted t.*', `select t.* from t where id >= ? order by id`],
      ['__proto__', `select id as "__proto__", name from t where id >= ? order by id`],
    ];
    for (const [what, text] of cases) {
      const compiled = { ...sql<Record<string, unknown>>`select 1`.compile(db), sql: text, parameters: [slot('from')] };
      const direct = await query(db, `rows test ${what}`, () => compiled, { from: 1 });
      // What better-sqlite3 itself makes, through Kysely's executor (it runs the same cached statement).
      const viaKysely = (await db.executeQuery({ ...compiled, parameters: [1] })).rows;
      assert.deepEqual(direct, viaKysely, what);
      for (const row of direct) assert.equal(Object.getPrototypeOf(row), Object.prototype, what);
      assert.ok(direct.length >= 1, what);
    }
    // One row by a unique key, and none.
    const one = () => ({
      ...sql<Record<string, unknown>>`select 1`.compile(db),
      sql: 'select id, name, n from t where id = ?',
      parameters: [slot('id')],
    });
    const opts = { oneRow: true };
    assert.deepEqual(await query(db, 'rows test one', one, { id: 1 }, opts), [{ id: 1, name: 'one', n: 1.5 }]);
    assert.deepEqual(await query(db, 'rows test one', one, { id: 3 }, opts), []);
    // Kysely's builder after the direct runner used the statement: objects still.
    assert.deepEqual(
      await db
        .selectFrom('t' as never)
        .select(['id', 'name'] as never)
        .where('id' as never, '>=', 1 as never)
        .orderBy('id' as never)
        .execute(),
      [
        { id: 1, name: 'one' },
        { id: 2, name: null },
      ],
    );
  } finally {
    await database.close();
  }
});
