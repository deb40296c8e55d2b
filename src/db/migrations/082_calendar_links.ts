import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Calendar feeds (PRODUCT §13): a user's feed token, kept only as its SHA-256 hash. Replaced by
 * each `calendarLink`, cleared by `calendarUnlink`, and cleared by the database when the user is
 * logically deleted (so restoring the user does not revive the old URL); a physically deleted user
 * takes it along.
 */
export const calendarLinks = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('users').addColumn('calendar_token_hash', 'text').execute();
    await db.schema
      .createIndex('users_calendar_token')
      .on('users')
      .columns(['account_id', 'calendar_token_hash'])
      .execute();
    if (dialect === 'postgres') {
      await sql`comment on column users.calendar_token_hash is 'SHA-256 of the calendar feed token (calendarLink); null when unlinked'`.execute(
        db,
      );
      await sql`create function fsm_users_calendar_unlink() returns trigger language plpgsql as $$
        begin
          if new.deleted = 1 and old.deleted = 0 then new.calendar_token_hash := null; end if;
          return new;
        end $$`.execute(db);
      await sql`create trigger users_calendar_unlink before update of deleted on users
        for each row execute function fsm_users_calendar_unlink()`.execute(db);
    } else {
      await sql`create trigger users_calendar_unlink after update of deleted on users
        when new.deleted = 1 and old.deleted = 0
        begin
          update users set calendar_token_hash = null where account_id = new.account_id and id = new.id;
        end`.execute(db);
    }
  },
});
