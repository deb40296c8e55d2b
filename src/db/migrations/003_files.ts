import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withId, withTimes, type AnyDb } from './columns.js';

/** Uploaded files: metadata rows; the bytes live in content-addressed storage keyed by sha256. */
export const files = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await withTimes(
      withId(db.schema.createTable('files'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        // A deleted job or uploader leaves the file in place, unattached.
        .addColumn('job_id', 'integer', (c) => c.references('jobs.id').onDelete('set null'))
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('deleted', 'integer', flag),
    ).execute();
    await db.schema.createIndex('files_account_id').on('files').columns(['account_id', 'id']).execute();
    // The "is anything still using these bytes?" check on delete looks rows up by digest.
    await db.schema.createIndex('files_sha256').on('files').column('sha256').execute();
    for (const col of ['job_id', 'user_id'])
      await db.schema.createIndex(`files_${col}`).on('files').column(col).execute();
  },
});
