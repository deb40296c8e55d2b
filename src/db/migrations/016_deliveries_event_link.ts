import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * PostgreSQL: a delivery's links to its event and to its webhook are kept by delete triggers
 * instead of foreign keys. The commit trigger inserts a transaction's events and their deliveries
 * in one statement (014_event_batches), joining the webhooks it reads, so the event and the webhook
 * of every queued delivery exist by construction; yet each key's check ran once per delivery,
 * locking the event row just inserted and the webhook's row (`FOR KEY SHARE`: a write of the row
 * and a WAL record each), inside the commit, under the account's events lock. With one webhook on
 * `*`, the two checks were about half of what the webhook cost a write (W4 with a webhook /
 * without, interleaved turns: 0.80–0.85 with the keys, 0.87–0.92 without; docs/performance.md).
 *
 * What the keys' `on delete cascade` did is now done by statement triggers: deleting events (the
 * retention purge) or webhooks (DELETE /webhooks/:id), by the server or by SQL written outside it,
 * deletes their deliveries in the same statement. Events are never deleted while a transaction
 * that inserts them runs. A webhook can be deleted while a commit queues its deliveries: its
 * trigger first takes the accounts' events locks (the `counters` rows the commit trigger holds),
 * so such a commit finishes first and the delete that follows, a statement of its own, sees its
 * deliveries; a commit after it waits, then no longer finds the webhook. SQLite keeps both keys
 * (its checks take no row locks, and its tables cannot drop a constraint in place).
 */
export const deliveriesEventLink = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect !== 'postgres') return;
    await sql`alter table deliveries drop constraint if exists deliveries_event_id_fkey`.execute(db);
    await sql`alter table deliveries drop constraint if exists deliveries_webhook_id_fkey`.execute(db);
    await sql`create function fsm_events_deleted() returns trigger language plpgsql as $$
      begin
        delete from deliveries d using gone where d.event_id = gone.id;
        return null;
      end $$`.execute(db);
    await sql`create trigger events_deleted after delete on events referencing old table as gone
      for each statement execute function fsm_events_deleted()`.execute(db);
    // An account's events row of counters exists once it has a webhook: creating one records an event.
    await sql`create function fsm_webhooks_deleted() returns trigger language plpgsql as $$
      begin
        perform 1 from counters where name = 'events' and account_id in (select account_id from gone)
          order by account_id for update;
        delete from deliveries d using gone where d.webhook_id = gone.id;
        return null;
      end $$`.execute(db);
    await sql`create trigger webhooks_deleted after delete on webhooks referencing old table as gone
      for each statement execute function fsm_webhooks_deleted()`.execute(db);
  },
});
