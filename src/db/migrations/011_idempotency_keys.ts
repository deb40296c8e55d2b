import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { withId, type AnyDb } from './columns.js';

/**
 * The answers kept for `Idempotency-Key` (PRODUCT §7). One row per (account, client, user, key):
 * the unique index is what lets exactly one of two concurrent requests with the same key claim
 * it. A row is `pending` (claimed, the write still running: `lease` names the claim, which
 * lasts a minute from `created`) or `done` (the answer, kept 24 h from `created`). Keeping the
 * answer changes no indexed column, so the update inside the write costs no index maintenance.
 */
export const idempotencyKeys = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('idempotency_keys'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('lease', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('headers', 'text')
      .addColumn('body', 'text')
      .addColumn('created', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('idempotency_keys_scope')
      .unique()
      .on('idempotency_keys')
      .columns(['account_id', 'client_id', 'user_id', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created').execute();
  },
});
