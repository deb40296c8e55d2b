import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withId, withTimes, type AnyDb } from './columns.js';

/**
 * The outbox of changes (`events`, one row per committed change, written in the transaction of
 * the change), the webhooks that subscribe to them and the queue of their deliveries.
 */
export const events = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    // Ids are drawn from the serial while the account's `events` counter row is locked (see
    // docs/events.md): within an account they become visible in increasing order.
    await withId(db.schema.createTable('events'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('collection', 'text', (c) => c.notNull())
      .addColumn('item_id', 'integer', (c) => c.notNull())
      .addColumn('changes', 'text')
      .addColumn('data', 'text', (c) => c.notNull())
      // No foreign key: an event is history and keeps naming its actor after the user is gone.
      .addColumn('actor_id', 'integer')
      .addColumn('client_id', 'text')
      .addColumn('occurred', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('events_account_id').on('events').columns(['account_id', 'id']).execute();
    await db.schema.createIndex('events_occurred').on('events').column('occurred').execute();

    await withTimes(
      withId(db.schema.createTable('webhooks'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('description', 'text')
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_until', 'bigint')
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since', 'bigint')
        .addColumn('deleted', 'integer', flag),
    ).execute();
    await db.schema.createIndex('webhooks_account_id').on('webhooks').columns(['account_id', 'id']).execute();

    await withTimes(
      withId(db.schema.createTable('deliveries'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
        .addColumn('event_id', 'integer', (c) => c.references('events.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        // The `webhook-id` header: one per event and webhook, the same on every retry.
        .addColumn('msg_id', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
        .addColumn('attempts', 'integer', flag)
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        // A process sending the delivery holds it until lease_until; after a crash it expires.
        .addColumn('lease_until', 'bigint')
        .addColumn('lease_owner', 'text'),
    ).execute();
    await db.schema.createIndex('deliveries_account_id').on('deliveries').columns(['account_id', 'id']).execute();
    await db.schema.createIndex('deliveries_due').on('deliveries').columns(['state', 'next_attempt_at']).execute();
    for (const col of ['webhook_id', 'event_id'])
      await db.schema.createIndex(`deliveries_${col}`).on('deliveries').column(col).execute();
  },
});
