import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withId, withTimes, type AnyDb } from './columns.js';

/** Notes on jobs; they go with their job, and outlive their author (author_id becomes null). */
export const notes = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await withTimes(
      withId(db.schema.createTable('notes'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('job_id', 'integer', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
        .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('deleted', 'integer', flag),
    ).execute();
    await db.schema.createIndex('notes_account_id').on('notes').columns(['account_id', 'id']).execute();
    await db.schema.createIndex('notes_account_job').on('notes').columns(['account_id', 'job_id', 'id']).execute();
    for (const col of ['job_id', 'author_id'])
      await db.schema.createIndex(`notes_${col}`).on('notes').column(col).execute();
  },
});
