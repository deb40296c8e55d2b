import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { registry } from '../collections/index.js';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';
import { rowCount } from './counted.js';
import type { Database } from './index.js';
import { migrateToLatest } from './migrate.js';

/**
 * What the collection declarations need of the database is made by migrations, never at start:
 * every collection table has its `version` column and the trigger that moves it, every `counted`
 * one its count triggers. A declaration (a new collection, or `counted: true` added) whose
 * migration forgot them fails here, on a freshly migrated database of each dialect.
 */
interface Trigger {
  table: string;
  /** PostgreSQL: the function it runs; SQLite: its SQL. */
  body: string;
}

async function triggers(database: Database): Promise<Map<string, Trigger>> {
  const { rows } =
    database.dialect.name === 'postgres'
      ? await sql<{ name: string; table: string; body: string }>`select g.tgname as name, c.relname as table,
          p.proname as body from pg_trigger g join pg_class c on c.oid = g.tgrelid join pg_proc p on p.oid = g.tgfoid
          where not g.tgisinternal and g.tgenabled <> 'D'`.execute(database.db)
      : await sql<{ name: string; table: string; body: string }>`select name, tbl_name as "table", sql as body
          from sqlite_master where type = 'trigger'`.execute(database.db);
  return new Map(rows.map((r) => [r.name, { table: r.table, body: r.body }]));
}

/** What the declarations `tables` need that the database lacks, one line each. */
async function missing(database: Database, tables: readonly { table: string; counted?: boolean }[]): Promise<string[]> {
  const pg = database.dialect.name === 'postgres';
  const have = await triggers(database);
  const live = await database.db.introspection.getTables();
  const out: string[] = [];
  const want = (name: string, table: string, body: RegExp) => {
    const t = have.get(name);
    if (!t || t.table !== table || !body.test(t.body)) out.push(`${table}: trigger ${name}`);
  };
  for (const c of tables) {
    const columns = live.find((t) => t.name === c.table)?.columns ?? [];
    if (!columns.some((col) => col.name === 'version')) out.push(`${c.table}: column version`);
    want(
      `${c.table}_version`,
      c.table,
      pg ? /^fsm_bump_version$/ : /after update .* set version = old\.version \+ 1/is,
    );
    if (!c.counted) continue;
    for (const op of ['insert', 'update', 'delete'])
      want(
        pg ? `${c.table}_rows_${op}` : `${c.table}_count_${op}`,
        c.table,
        pg ? /^fsm_count_statement$/ : new RegExp(`after ${op} on ${c.table} .*row_counts`, 'is'),
      );
  }
  return out;
}

for (const dialect of DIALECTS) {
  describe(`the DDL the declarations need comes from migrations (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect);
    });
    after(() => t?.close());

    test('every collection table has its version trigger, every counted one its count triggers', async () => {
      assert.ok(registry.list.filter((c) => c.counted).length >= 5, 'the registry was read');
      assert.deepEqual(await missing(t.database, registry.list), []);
    });

    test('a declaration without its migration is found (control)', async () => {
      await sql`create table derived_control (id integer primary key, account_id integer not null)`.execute(
        t.database.db,
      );
      try {
        const verb = dialect === 'postgres' ? 'rows' : 'count';
        assert.deepEqual(await missing(t.database, [{ table: 'derived_control', counted: true }]), [
          'derived_control: column version',
          'derived_control: trigger derived_control_version',
          ...['insert', 'update', 'delete'].map((op) => `derived_control: trigger derived_control_${verb}_${op}`),
        ]);
        // A trigger of that name on another table is not the one wanted.
        assert.deepEqual(await missing(t.database, [{ table: 'notes', counted: true }]), []);
      } finally {
        await sql`drop table derived_control`.execute(t.database.db);
      }
    });
  });

  describe(`migration 018 on a database of the old start-up (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    before(async () => {
      // As 017 leaves a database that never started: no count triggers, no versions on later tables.
      t = await createTestDb(dialect, { upTo: '017_webhook_cursors' });
    });
    after(() => t?.close());

    test('rows already there are counted, later changes too, and events have versions', async () => {
      // Written as the code of that day wrote them, by SQL: today's code expects today's schema.
      const db = t.database.db;
      const now = Date.now();
      const times = { created: now, modified: now };
      const account = await db
        .insertInto('accounts')
        .values({ company_name: 'Old Ltd', licenses: 1, country_code: 0, ...times })
        .returning('id')
        .executeTakeFirstOrThrow();
      const role = await db
        .insertInto('roles')
        .values({ account_id: account.id, name: 'Administrator', kind: 'administrator' })
        .returning('id')
        .executeTakeFirstOrThrow();
      const user = await db
        .insertInto('users')
        .values({
          account_id: account.id,
          role_id: role.id,
          first_name: 'Ada',
          last_name: 'Admin',
          mobile: '+1',
          ...times,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const status = await db
        .insertInto('statuses')
        .values({ account_id: account.id, label: 'New', status_group: 'new', ...times })
        .returning('id')
        .executeTakeFirstOrThrow();
      const job = await db
        .insertInto('jobs')
        .values({ account_id: account.id, reference: 'J-1', title: 'Old job', status_id: status.id, ...times })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('events')
        .values({
          account_id: account.id,
          type: 'jobs.created',
          collection: 'jobs',
          item_id: job.id,
          data: '{}',
          occurred: now,
        })
        .execute();
      const note = {
        account_id: account.id,
        job_id: job.id,
        author_id: user.id,
        body: 'old',
        created: now,
        modified: now,
      };
      await db.insertInto('notes').values([note, note]).execute();
      const count = async (table: string) => {
        const row = await rowCount(db, table, account.id).executeTakeFirstOrThrow();
        return row.version === null ? -1 : Number(row.value);
      };
      assert.equal(await count('notes'), -1, 'not counted before 018');
      assert.ok((await missing(t.database, registry.list)).length > 0);

      await migrateToLatest(t.database);
      assert.deepEqual(await missing(t.database, registry.list), []);
      assert.equal(await count('notes'), 2);
      assert.equal(await count('jobs'), 1);
      assert.equal(await count('users'), 1);
      await db.insertInto('notes').values(note).execute();
      assert.equal(await count('notes'), 3);
      await db.updateTable('jobs').set({ title: 'Renamed' }).where('account_id', '=', account.id).execute();
      const versions = await db.selectFrom('jobs').select('version').where('account_id', '=', account.id).execute();
      assert.deepEqual(
        versions.map((v) => v.version),
        [2],
      );
      const events = await db.selectFrom('events').select('version').where('account_id', '=', account.id).execute();
      assert.ok(events.length > 0 && events.every((e) => e.version === 1));
    });
  });
}
