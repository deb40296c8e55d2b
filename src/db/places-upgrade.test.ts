import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';
import { migrateToLatest } from './migrate.js';

/**
 * Migration 050 adds a foreign key to `jobs`, which SQLite can only do by making the table again:
 * a database with jobs and visits, migrated, keeps every row, id and link, its AUTOINCREMENT
 * counter, and its triggers (a job's visits still go with it; a site's deletion nulls a job's site).
 */
for (const dialect of DIALECTS) {
  describe(`migration 050 on a database with jobs (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect, { upTo: '030_file_deletions' });
    });
    after(() => t?.close());

    test('keeps jobs, their ids and visits; the new key and triggers work', async () => {
      const db = t.database.db;
      const now = Date.now();
      const ins = async (text: string) =>
        Number(Object.values((await sql.raw<Record<string, unknown>>(text).execute(db)).rows[0] ?? {})[0]);
      const account = await ins(
        `insert into accounts (company_name, created, modified) values ('Old', ${now}, ${now}) returning id`,
      );
      const status = await ins(
        `insert into statuses (account_id, label, created, modified) values (${account}, 'New', ${now}, ${now}) returning id`,
      );
      const jobs: number[] = [];
      for (const ref of ['J-1', 'J-2', 'J-3'])
        jobs.push(
          await ins(`insert into jobs (account_id, reference, title, status_id, created, modified)
            values (${account}, '${ref}', 'Old job', ${status}, ${now}, ${now}) returning id`),
        );
      await sql.raw(`delete from jobs where id = ${jobs[2]}`).execute(db);
      await sql
        .raw(
          `insert into visits (account_id, job_id, label, start_time, end_time, created, modified)
          values (${account}, ${jobs[0]}, 'Old visit', 1, 2, ${now}, ${now})`,
        )
        .execute(db);
      await migrateToLatest(t.database);
      const rows = await sql<{ id: number; site_id: number | null; address_lat: number | null }>`
        select id, site_id, address_lat from jobs order by id`.execute(db);
      assert.deepEqual(
        rows.rows.map((r) => [Number(r.id), r.site_id, r.address_lat]),
        [
          [jobs[0], null, null],
          [jobs[1], null, null],
        ],
      );
      // A new job gets a new id, never the deleted one's.
      const next = await ins(`insert into jobs (account_id, reference, title, status_id, created, modified)
        values (${account}, 'J-4', 'New job', ${status}, ${now}, ${now}) returning id`);
      assert.ok(next > jobs[2], `${next} > ${jobs[2]}`);
      const client = await ins(
        `insert into clients (account_id, name, created, modified) values (${account}, 'C', ${now}, ${now}) returning id`,
      );
      const site = await ins(`insert into sites (account_id, client_id, name, created, modified)
        values (${account}, ${client}, 'S', ${now}, ${now}) returning id`);
      await sql.raw(`update jobs set client_id = ${client}, site_id = ${site} where id = ${jobs[1]}`).execute(db);
      // The key: a site that does not exist (or is another account's) is refused.
      await assert.rejects(sql.raw(`update jobs set site_id = ${site + 1000} where id = ${jobs[1]}`).execute(db));
      // Deleting the site nulls the job's site; deleting a job still deletes its visits.
      await sql.raw(`delete from sites where id = ${site}`).execute(db);
      assert.equal(await ins(`select site_id from jobs where id = ${jobs[1]}`), 0);
      await sql.raw(`delete from jobs where id = ${jobs[0]}`).execute(db);
      assert.equal(await ins(`select count(*) from visits`), 0);
      // The version trigger still moves a job's version.
      const v = await ins(`select version from jobs where id = ${jobs[1]}`);
      await sql.raw(`update jobs set title = 'Renamed' where id = ${jobs[1]}`).execute(db);
      assert.equal(await ins(`select version from jobs where id = ${jobs[1]}`), v + 1);
    });
  });
}
