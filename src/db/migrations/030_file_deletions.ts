import type { Migration } from 'kysely';
import type { AnyDb } from './columns.js';

/**
 * Bytes to remove once the file store is back: a digest whose last `files` row was deleted while
 * the store could not be reached. The bytes are shared by every account that uploaded the same
 * content, so the row names a digest, not an account (a reference table under Citus). Each process
 * retries these in the background, and removes the bytes only if no row references the digest by
 * then (src/collections/files/bytes.ts).
 */
export const fileDeletions = (): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('file_deletions')
      .addColumn('sha256', 'text', (c) => c.primaryKey())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .execute();
  },
});
