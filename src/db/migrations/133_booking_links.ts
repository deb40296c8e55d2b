import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * A job's booking link (PRODUCT §18, `bookingLink`): the share links' columns of migration 131 on
 * jobs, the token stored only as its SHA-256 (`share_token_hash`, looked up with the account by
 * `jobs_share_token`) with its end (`share_expires_at`, epoch ms).
 */
export const bookingLinks = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('jobs').addColumn('share_token_hash', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('share_expires_at', 'bigint').execute();
    await db.schema.createIndex('jobs_share_token').on('jobs').columns(['account_id', 'share_token_hash']).execute();
    if (dialect === 'postgres')
      await sql
        .raw(
          `comment on column jobs.share_token_hash is 'SHA-256 of the booking link token (bookingLink); null when unshared'`,
        )
        .execute(db);
  },
});
