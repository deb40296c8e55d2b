import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * PostgreSQL: a transaction's events are written at its commit, under the account's events lock
 * (docs/events.md, "The ordering promise"). The change hook stages them as one row of
 * `event_batches` (a JSON array); a deferred constraint trigger on that row runs inside COMMIT:
 * it takes the account's `events` row of `counters` (held to the end of the commit), inserts the
 * events in order, drawing their ids, queues one delivery per event and subscribed webhook, and
 * deletes the staged row. The lock is thus held only while the database commits, never across a
 * round trip to the server (before: from the events insert to the commit, three round trips, on
 * which every writer of the account queued).
 *
 * The table is unlogged (a staged row never outlives its transaction: nothing to keep in the WAL
 * or to replay after a crash) and has no primary key (rows are found by account and batch).
 * SQLite writes one transaction at a time: its events are inserted directly, and it has no such
 * table. (Migration 017 took the queueing of deliveries out of the trigger: the worker does it.)
 */
export const eventBatches = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect !== 'postgres') return;
    await sql`create unlogged table event_batches (
      account_id integer not null,
      batch bigserial not null,
      events jsonb not null,
      now bigint not null
    )`.execute(db);
    await sql`create index event_batches_account_id on event_batches (account_id, batch)`.execute(db);
    // A staged batch of a few events stays in its row, uncompressed: it lives for one transaction.
    await sql`alter table event_batches set (toast_tuple_target = 8160)`.execute(db);
    // A webhook's patterns: '*', '<collection>.*' or an exact type (src/collections/events/record.ts, matches()).
    // The webhook-id of a delivery: 'msg_' and 16 random bytes in base64url, as newMessageId() makes them.
    await sql`create function fsm_record_events() returns trigger language plpgsql as $$
      begin
        insert into counters (account_id, name, value) values (new.account_id, 'events', jsonb_array_length(new.events))
          on conflict (account_id, name) do update set value = counters.value + excluded.value;
        with recorded as (
          insert into events (account_id, type, collection, item_id, changes, data, actor_id, client_id, occurred)
          select new.account_id, e.type, e.collection, e.item_id, e.changes, e.data, e.actor_id, e.client_id, e.occurred
          from rows from (jsonb_to_recordset(new.events) as (type text, collection text, item_id integer, changes text,
            data text, actor_id integer, client_id text, occurred bigint)) with ordinality
            as e(type, collection, item_id, changes, data, actor_id, client_id, occurred, n)
          order by e.n
          returning id, type, collection
        )
        insert into deliveries (account_id, webhook_id, event_id, type, msg_id, state, attempts, next_attempt_at, created, modified)
        select new.account_id, w.id, recorded.id, recorded.type,
          'msg_' || rtrim(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), '='),
          'pending', 0, new.now, new.now, new.now
        from recorded join webhooks w on w.account_id = new.account_id and w.active = 1 and w.deleted = 0 and w.disabled_reason is null
        where exists (select 1 from jsonb_array_elements_text(w.events::jsonb) p(pattern)
          where p.pattern in ('*', recorded.type, recorded.collection || '.*'))
        order by recorded.id, w.id;
        delete from event_batches where account_id = new.account_id and batch = new.batch;
        return null;
      end $$`.execute(db);
    await sql`create constraint trigger event_batches_record after insert on event_batches
      deferrable initially deferred for each row execute function fsm_record_events()`.execute(db);
  },
});
