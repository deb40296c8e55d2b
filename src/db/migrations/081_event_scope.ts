import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * What a Contractor may see of an event (PRODUCT §13), kept beside it when it is recorded so that
 * reading `/events` as a Contractor joins no JSON: `scope_job_id`, the job the item belongs to (a
 * job's own id; a note's, file's or charge's `job`); `scope_user_id` and `scope_old_user_id`, the
 * item's `user` after and before the change (a visit's assignee, so a reassignment away from a
 * Contractor still reaches them). Null where the item has none. Older events keep nulls.
 *
 * PostgreSQL writes events at the commit from the staged batch (014, 017): the trigger function
 * copies the new members too, and notifies channel `fsm_events` with the account id, which the
 * live stream of every process listens on (src/http/event-stream.ts).
 */
export const eventScope = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('events').addColumn('scope_job_id', 'integer').execute();
    await db.schema.alterTable('events').addColumn('scope_user_id', 'integer').execute();
    await db.schema.alterTable('events').addColumn('scope_old_user_id', 'integer').execute();
    if (dialect !== 'postgres') return;
    await sql`comment on column events.scope_job_id is 'The job the item belongs to (its own id for a job), for Contractors'' events; null if none'`.execute(
      db,
    );
    await sql`comment on column events.scope_user_id is 'The item''s user (a visit''s assignee) after the change; null if none'`.execute(
      db,
    );
    await sql`comment on column events.scope_old_user_id is 'The item''s user (a visit''s assignee) before the change; null if none'`.execute(
      db,
    );
    await sql`create or replace function fsm_record_events() returns trigger language plpgsql as $$
      begin
        insert into counters (account_id, name, value) values (new.account_id, 'events', jsonb_array_length(new.events))
          on conflict (account_id, name) do update set value = counters.value + excluded.value;
        insert into events (account_id, type, collection, item_id, changes, data, actor_id, client_id, occurred,
          scope_job_id, scope_user_id, scope_old_user_id)
        select new.account_id, e.type, e.collection, e.item_id, e.changes, e.data, e.actor_id, e.client_id, e.occurred,
          e.scope_job_id, e.scope_user_id, e.scope_old_user_id
        from rows from (jsonb_to_recordset(new.events) as (type text, collection text, item_id integer, changes text,
          data text, actor_id integer, client_id text, occurred bigint, scope_job_id integer, scope_user_id integer,
          scope_old_user_id integer)) with ordinality
          as e(type, collection, item_id, changes, data, actor_id, client_id, occurred, scope_job_id, scope_user_id,
            scope_old_user_id, n)
        order by e.n;
        delete from event_batches where account_id = new.account_id and batch = new.batch;
        -- Live streams (GET /events, text/event-stream) in every process wake on this: sent at the
        -- commit, once per transaction and account (PostgreSQL folds identical notifications).
        perform pg_notify('fsm_events', new.account_id::text);
        return null;
      end $$`.execute(db);
  },
});
