import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Fixed-window rate-limit counters, shared by every process on the database (PRODUCT §5).
 * One row per bucket (a hashed token, a client address): the upsert that counts a request also
 * starts a new window, so the table never holds more than one row per bucket.
 */
export const rateLimits = (_dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('rate_limits')
      .addColumn('bucket', 'text', (c) => c.primaryKey())
      .addColumn('window_start', 'bigint', (c) => c.notNull())
      .addColumn('hits', 'integer', (c) => c.notNull())
      .execute();
    // The sweep of stale buckets scans by window.
    await db.schema.createIndex('rate_limits_window').on('rate_limits').column('window_start').execute();
  },
});
