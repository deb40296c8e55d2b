import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Share links (PRODUCT §18): a quote's and an invoice's link is stored only as the SHA-256 of its
 * token (`share_token_hash`, looked up with the account by `<table>_share_token`) with its end
 * (`share_expires_at`, epoch ms); `viewed_at` is the link's first opening. A quote keeps what its
 * customer decided: `acceptance` (JSON text) or `decline_reason`.
 */
export const shareLinks = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const table of ['quotes', 'invoices']) {
      await db.schema.alterTable(table).addColumn('share_token_hash', 'text').execute();
      await db.schema.alterTable(table).addColumn('share_expires_at', 'bigint').execute();
      await db.schema.alterTable(table).addColumn('viewed_at', 'bigint').execute();
      await db.schema
        .createIndex(`${table}_share_token`)
        .on(table)
        .columns(['account_id', 'share_token_hash'])
        .execute();
      if (dialect === 'postgres')
        await sql
          .raw(
            `comment on column ${table}.share_token_hash is 'SHA-256 of the share link token (shareLink); null when unshared'`,
          )
          .execute(db);
    }
    await db.schema.alterTable('quotes').addColumn('acceptance', 'text').execute();
    await db.schema.alterTable('quotes').addColumn('decline_reason', 'text').execute();
  },
});
