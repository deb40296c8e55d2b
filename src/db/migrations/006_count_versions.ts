import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';
import { COUNTED_TABLES, rowCounter } from './004_performance.js';

/**
 * A change counter per account and table: `counters.version` of the `rows:<table>` row, bumped by
 * the same triggers as the row count, now on update too, so in the same transaction as every
 * change to the table (cascades and SET NULLs included). A filtered list's `recordsCount` is cached
 * under the version it was counted at (src/collections/machinery/count-cache.ts): while the version
 * is unchanged, no row of the table changed in that account and the cached count is still exact.
 */
export const countVersions = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('counters')
      .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create or replace function fsm_count_rows() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then
            insert into counters (account_id, name, value, version) values (new.account_id, 'rows:' || tg_table_name, 1, 1)
              on conflict (account_id, name) do update set value = counters.value + 1, version = counters.version + 1;
            return new;
          elsif tg_op = 'UPDATE' then
            update counters set version = version + 1
              where name = 'rows:' || tg_table_name and account_id in (old.account_id, new.account_id);
            return new;
          end if;
          update counters set value = value - 1, version = version + 1 where account_id = old.account_id and name = 'rows:' || tg_table_name;
          return old;
        end $$`,
        )
        .execute(db);
      for (const table of COUNTED_TABLES) {
        await sql.raw(`drop trigger ${table}_count on ${table}`).execute(db);
        await sql
          .raw(
            `create trigger ${table}_count after insert or update or delete on ${table} for each row execute function fsm_count_rows()`,
          )
          .execute(db);
      }
      return;
    }
    for (const table of COUNTED_TABLES) {
      const name = rowCounter(table);
      await sql.raw(`drop trigger ${table}_count_insert`).execute(db);
      await sql.raw(`drop trigger ${table}_count_delete`).execute(db);
      await sql
        .raw(
          `create trigger ${table}_count_insert after insert on ${table} begin
        insert into counters (account_id, name, value, version) values (new.account_id, '${name}', 1, 1)
          on conflict (account_id, name) do update set value = value + 1, version = version + 1;
      end`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_count_delete after delete on ${table} begin
        update counters set value = value - 1, version = version + 1 where account_id = old.account_id and name = '${name}';
      end`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_count_update after update on ${table} begin
        update counters set version = version + 1 where name = '${name}' and account_id in (old.account_id, new.account_id);
      end`,
        )
        .execute(db);
    }
  },
});
