import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Deliveries are queued by the delivery worker, no longer by the transaction of the change
 * (src/webhooks/fanout.ts, docs/events.md "Queueing"): each webhook has a cursor, the id of the
 * last of its account's events it has queued (or passed over, while paused); the worker reads the
 * events after it, queues their deliveries and moves it, in one transaction that holds the cursor's
 * row. Since ids become visible in increasing order per account, no event is passed by.
 *
 * `webhooks.events_after` is the account's last event id when the webhook was created (set by the
 * create, inside its transaction): its cursor starts there, so it receives the events committed
 * after it was, its own `webhooks.created` among them. Deleting a webhook deletes its cursor
 * (SQLite: the foreign key; PostgreSQL: the webhooks' delete trigger of 016, as for deliveries,
 * so that TRUNCATE stays allowed), which waits for a worker holding it: the deliveries it queued
 * are committed by then, and are deleted too.
 *
 * Existing webhooks start at their account's last event: the commit trigger had queued every
 * earlier one. On PostgreSQL that trigger (014) now writes only the events, and the webhook's delete
 * trigger no longer takes the account's events lock, which only guarded deliveries queued inside a
 * commit.
 */
export const webhookCursors = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('webhooks').addColumn('events_after', 'integer').execute();
    await db.schema
      .createTable('webhook_cursors')
      .addColumn('account_id', 'integer', (c) => c.notNull())
      // PostgreSQL: kept by the webhooks' delete and truncate triggers, like deliveries (016).
      .addColumn('webhook_id', 'integer', (c) =>
        dialect === 'postgres' ? c.notNull() : c.notNull().references('webhooks.id').onDelete('cascade'),
      )
      .addColumn('event_id', 'integer', (c) => c.notNull())
      // Whether the webhook was receiving (active, not deleted, not disabled) as of that event.
      .addColumn('live', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_cursors_pkey', ['account_id', 'webhook_id'])
      .execute();
    await db.schema.createIndex('webhook_cursors_webhook_id').on('webhook_cursors').column('webhook_id').execute();
    // A webhook's own changes, found past its cursor without reading the events between; and its
    // deliveries waiting for a first attempt, counted without reading its history of sent ones.
    await sql`create index events_webhook_changes on events (account_id, item_id, id) where collection = 'webhooks'`.execute(
      db,
    );
    await sql`create index deliveries_waiting on deliveries (account_id, webhook_id) where state = 'pending' and attempts = 0`.execute(
      db,
    );
    await sql`insert into webhook_cursors (account_id, webhook_id, event_id, live)
      select w.account_id, w.id, coalesce((select max(e.id) from events e where e.account_id = w.account_id), 0),
        case when w.active = 1 and w.deleted = 0 and w.disabled_reason is null then 1 else 0 end
      from webhooks w`.execute(db);
    if (dialect !== 'postgres') return;
    await sql`create or replace function fsm_record_events() returns trigger language plpgsql as $$
      begin
        insert into counters (account_id, name, value) values (new.account_id, 'events', jsonb_array_length(new.events))
          on conflict (account_id, name) do update set value = counters.value + excluded.value;
        insert into events (account_id, type, collection, item_id, changes, data, actor_id, client_id, occurred)
        select new.account_id, e.type, e.collection, e.item_id, e.changes, e.data, e.actor_id, e.client_id, e.occurred
        from rows from (jsonb_to_recordset(new.events) as (type text, collection text, item_id integer, changes text,
          data text, actor_id integer, client_id text, occurred bigint)) with ordinality
          as e(type, collection, item_id, changes, data, actor_id, client_id, occurred, n)
        order by e.n;
        delete from event_batches where account_id = new.account_id and batch = new.batch;
        return null;
      end $$`.execute(db);
    // The cursors first: a worker holding one is waited for, and the deliveries it queued are
    // then seen by the next statement (each takes a new snapshot) and deleted.
    await sql`create or replace function fsm_webhooks_deleted() returns trigger language plpgsql as $$
      begin
        delete from webhook_cursors c using gone where c.webhook_id = gone.id and c.account_id = gone.account_id;
        delete from deliveries d using gone where d.webhook_id = gone.id and d.account_id = gone.account_id;
        return null;
      end $$`.execute(db);
    await sql`create or replace function fsm_webhooks_truncated() returns trigger language plpgsql as $$
      begin
        delete from webhook_cursors;
        delete from deliveries;
        return null;
      end $$`.execute(db);
  },
});
