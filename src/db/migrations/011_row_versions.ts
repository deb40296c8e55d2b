import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/** The collection tables as they are at this migration (frozen: later tables add their own). */
const TABLES = ['users', 'workgroups', 'statuses', 'clients', 'jobs', 'visits', 'files', 'notes'];

/**
 * A row version per item, the source of its strong ETag (PRODUCT §7). Triggers bump it on every
 * UPDATE of the row, whoever runs it: the write pipeline, a collection rule changing other rows,
 * or the database itself (ON DELETE SET NULL is an update of the referencing row, and fires row
 * triggers on both dialects). An item's association list lives in a link table
 * (workgroup_members): adding or removing a link bumps the rows at both ends, since both present
 * the list. Expanded members of other items (`fields=[*]`) are not the item's own data and do not
 * count.
 */
export const rowVersions = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const table of TABLES) {
      await db.schema
        .alterTable(table)
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
    }
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create or replace function fsm_bump_version() returns trigger language plpgsql as $$
        begin
          new.version := old.version + 1;
          return new;
        end $$`,
        )
        .execute(db);
      await sql
        .raw(
          `create or replace function fsm_bump_members() returns trigger language plpgsql as $$
        declare r record;
        begin
          if tg_op = 'DELETE' then r := old; else r := new; end if;
          update workgroups set version = version + 1 where id = r.workgroup_id;
          update users set version = version + 1 where id = r.user_id;
          return null;
        end $$`,
        )
        .execute(db);
      for (const table of TABLES) {
        await sql
          .raw(
            `create trigger ${table}_version before update on ${table} for each row execute function fsm_bump_version()`,
          )
          .execute(db);
      }
      await sql
        .raw(
          'create trigger workgroup_members_version after insert or delete on workgroup_members for each row execute function fsm_bump_members()',
        )
        .execute(db);
      return;
    }
    // SQLite cannot change NEW in a trigger: a second update sets the version. Recursive triggers
    // are off, and the WHEN guard would stop a loop anyway.
    for (const table of TABLES) {
      await sql
        .raw(
          `create trigger ${table}_version after update on ${table} when new.version = old.version begin
        update ${table} set version = old.version + 1 where id = new.id;
      end`,
        )
        .execute(db);
    }
    for (const [event, row] of [
      ['insert', 'new'],
      ['delete', 'old'],
    ]) {
      await sql
        .raw(
          `create trigger workgroup_members_version_${event} after ${event} on workgroup_members begin
        update workgroups set version = version + 1 where id = ${row}.workgroup_id;
        update users set version = version + 1 where id = ${row}.user_id;
      end`,
        )
        .execute(db);
    }
  },
});
