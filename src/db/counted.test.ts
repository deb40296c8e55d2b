import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createAccount } from '../accounts/service.js';
import { registry } from '../collections/index.js';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';
import { ensureRowCounters, rowCount } from './counted.js';

/**
 * A table that becomes counted after it already holds rows (a collection newly marked `counted`
 * on an old database) gets its triggers at start, with its existing rows counted: recordsCount is
 * never 0 for rows that are there.
 */
for (const dialect of DIALECTS) {
  describe(`row counters made from the declarations (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect);
    });
    after(() => t?.close());

    // -1: no count kept at all (no slot row yet).
    const counter = async (accountId: number) => {
      const row = await rowCount(t.database.db, 'notes', accountId).executeTakeFirstOrThrow();
      return row.version === null ? -1 : Number(row.value);
    };

    test('every counted collection has its triggers on a fresh database', async () => {
      for (const c of registry.list.filter((x) => x.counted)) {
        const name = dialect === 'postgres' ? `${c.table}_rows_insert` : `${c.table}_count_insert`;
        const { rows } =
          dialect === 'postgres'
            ? await sql<{ n: number }>`select count(*)::int as n from pg_trigger where tgname = ${name}`.execute(
                t.database.db,
              )
            : await sql<{
                n: number;
              }>`select count(*) as n from sqlite_master where type = 'trigger' and name = ${name}`.execute(
                t.database.db,
              );
        assert.equal(Number(rows[0].n), 1, c.table);
      }
    });

    test('a table counted late: existing rows are counted and later changes too', async () => {
      const { account, user } = await createAccount(t.services.writer, {
        companyName: 'Late Ltd',
        firstName: 'Ada',
        lastName: 'Admin',
        mobile: '+447700900001',
        login: `late-${dialect}-${Date.now()}`,
        password: 'correct horse battery',
      });
      // As an old database would be: notes rows, no triggers, no counter.
      if (dialect === 'postgres')
        for (const op of ['insert', 'update', 'delete'])
          await sql.raw(`drop trigger notes_rows_${op} on notes`).execute(t.database.db);
      else
        for (const s of ['insert', 'delete', 'update'])
          await sql.raw(`drop trigger notes_count_${s}`).execute(t.database.db);
      const now = Date.now();
      const job = await t.database.db
        .insertInto('jobs')
        .values({
          account_id: account.id,
          reference: 'J-1',
          title: 'Old job',
          status_id: (
            await t.database.db
              .selectFrom('statuses')
              .select('id')
              .where('account_id', '=', account.id)
              .executeTakeFirstOrThrow()
          ).id,
          priority: 'normal',
          deleted: 0,
          created: now,
          modified: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const note = {
        account_id: account.id,
        job_id: job.id,
        author_id: user.id,
        body: 'old',
        deleted: 0,
        created: now,
        modified: now,
      };
      await t.database.db.insertInto('notes').values([note, note]).execute();
      assert.equal(await counter(account.id), -1);

      await ensureRowCounters(t.database, ['notes']);
      assert.equal(await counter(account.id), 2);
      await t.database.db.insertInto('notes').values(note).execute();
      assert.equal(await counter(account.id), 3);
      await ensureRowCounters(t.database, ['notes']); // idempotent: made once
      assert.equal(await counter(account.id), 3);
    });
  });
}
