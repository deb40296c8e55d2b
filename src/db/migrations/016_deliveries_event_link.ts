import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * PostgreSQL: a delivery's link to its event is kept by a trigger instead of a foreign key. The
 * commit trigger inserts a transaction's events and their deliveries in one statement
 * (014_event_batches), so the event of every queued delivery exists by construction; yet the
 * foreign key's check ran once per delivery, locking the event row just inserted (`FOR KEY SHARE`:
 * a write of the row and a WAL record each), inside the commit, under the account's events lock.
 * With one webhook on `*`, the check was about half of what the webhook cost a write (W4 with a
 * webhook / without, interleaved turns, five runs each: 0.82–0.85 with it, 0.90–0.93 with
 * neither this nor the webhook's key; docs/performance.md).
 *
 * What the key's `on delete cascade` did is now a statement trigger: deleting events (the
 * retention purge, or SQL written outside the server) deletes their deliveries in the same
 * statement. Events are never deleted while a transaction that inserts them runs, so nothing can
 * point at a missing event. The webhook's key stays: a webhook can be deleted while a commit
 * queues its deliveries, and the key makes that commit wait and see it. SQLite keeps both keys
 * (its checks take no row locks, and its tables cannot drop a constraint in place).
 */
export const deliveriesEventLink = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect !== 'postgres') return;
    await sql`alter table deliveries drop constraint if exists deliveries_event_id_fkey`.execute(db);
    await sql`create function fsm_events_deleted() returns trigger language plpgsql as $$
      begin
        delete from deliveries d using gone where d.event_id = gone.id;
        return null;
      end $$`.execute(db);
    await sql`create trigger events_deleted after delete on events referencing old table as gone
      for each statement execute function fsm_events_deleted()`.execute(db);
  },
});
