import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * A statement trigger on `table` after `event`, running `body` (PL/pgSQL statements; the deleted
 * rows are the transition table `gone`): `<table>_<event>d`, its function `fsm_<table>_<event>d`.
 */
async function afterStatement(
  db: AnyDb,
  table: 'events' | 'webhooks',
  event: 'delete' | 'truncate',
  body: string,
): Promise<void> {
  const name = `${table}_${event}d`;
  await sql
    .raw(
      `create function fsm_${name}() returns trigger language plpgsql as $$
      begin
        ${body}
        return null;
      end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${name} after ${event} on ${table}${event === 'delete' ? ' referencing old table as gone' : ''}
      for each statement execute function fsm_${name}()`,
    )
    .execute(db);
}

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
 * trigger takes the accounts' events locks (the `counters` rows the commit trigger holds), so such
 * a commit finishes first and the delete that follows, a statement of its own, sees its
 * deliveries; a commit after it waits, then no longer finds the webhook. A ping queues its delivery
 * by one statement that locks the webhook's row (src/collections/webhooks/actions.ts). TRUNCATE,
 * which the keys refused, now empties the deliveries that pointed at the rows. SQLite keeps both keys
 * (its checks take no row locks, and its tables cannot drop a constraint in place).
 * Migration 017 replaced the webhooks' delete trigger: deliveries are no longer queued inside a
 * commit, and it deletes the webhook's cursor first instead of taking the events lock.
 */
export const deliveriesEventLink = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect !== 'postgres') return;
    await sql`alter table deliveries drop constraint if exists deliveries_event_id_fkey`.execute(db);
    await sql`alter table deliveries drop constraint if exists deliveries_webhook_id_fkey`.execute(db);
    await afterStatement(
      db,
      'events',
      'delete',
      'delete from deliveries d using gone where d.event_id = gone.id and d.account_id = gone.account_id;',
    );
    // The deliveries go first, then the accounts' events locks are taken (the row made when
    // missing, for accounts that still exist: not while an account's deletion cascades here), which
    // waits for a commit queueing deliveries for these webhooks right now, and what it queued goes
    // too. The lock is held to the end of the transaction; the first delete keeps that short.
    const webhooksDeliveries =
      'delete from deliveries d using gone where d.webhook_id = gone.id and d.account_id = gone.account_id;';
    await afterStatement(
      db,
      'webhooks',
      'delete',
      `${webhooksDeliveries}
        insert into counters (account_id, name, value)
          select distinct g.account_id, 'events', 0 from gone g join accounts a on a.id = g.account_id order by 1
          on conflict (account_id, name) do update set value = counters.value;
        ${webhooksDeliveries}`,
    );
    // TRUNCATE, which the keys refused, empties the deliveries that pointed at the rows.
    await afterStatement(db, 'events', 'truncate', 'delete from deliveries where event_id is not null;');
    await afterStatement(db, 'webhooks', 'truncate', 'delete from deliveries;');
  },
});
