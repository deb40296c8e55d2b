import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Row counts in slots, so that writers of one account and table no longer queue on one row.
 * `row_counts (account_id, tbl, slot)` replaces the `rows:<table>` rows of `counters`: the count
 * is the sum of `value` over the slots, the change version the sum of `version` (every committed
 * change adds 1 to one slot, so the sum moves on every change, as the single row's version did).
 *
 * PostgreSQL: each pooled connection holds a slot number of its own for its lifetime (a session
 * advisory lock on the lowest free number, taken on connect: src/db/index.ts, `fsm.slot`), and the
 * triggers write that slot: two transactions running at once never write the same slot row, so
 * they never wait on a count. Sessions without a slot (psql, other tools) share slot 0. SQLite
 * writes one transaction at a time and uses slot 0 alone; its triggers are remade at start into
 * the new table (src/db/counted.ts) once this drops the old ones.
 */
export const rowCountSlots = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('row_counts')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('tbl', 'text', (c) => c.notNull())
      .addColumn('slot', 'integer', (c) => c.notNull())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .addColumn('version', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('row_counts_pk', ['account_id', 'tbl', 'slot'])
      .execute();
    if (dialect === 'postgres') {
      // Update first (the common case, one index probe); the insert only on a slot's first change.
      // A row deleted by an account's own deletion (cascade) finds its account gone: nothing to keep.
      await sql
        .raw(
          `create or replace function fsm_add_rows(a integer, t text, d integer) returns void language plpgsql as $$
        declare s integer := coalesce(nullif(current_setting('fsm.slot', true), ''), '0')::integer;
        begin
          update row_counts set value = value + d, version = version + 1 where account_id = a and tbl = t and slot = s;
          if not found then
            insert into row_counts (account_id, tbl, slot, value, version)
              select a, t, s, d, 1 where exists (select 1 from accounts where id = a)
              on conflict (account_id, tbl, slot) do update set value = row_counts.value + d, version = row_counts.version + 1;
          end if;
        end $$`,
        )
        .execute(db);
      await sql
        .raw(
          `create or replace function fsm_count_rows() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then
            perform fsm_add_rows(new.account_id, tg_table_name, 1);
            return new;
          elsif tg_op = 'DELETE' then
            perform fsm_add_rows(old.account_id, tg_table_name, -1);
            return old;
          end if;
          perform fsm_add_rows(new.account_id, tg_table_name, 0);
          if old.account_id <> new.account_id then perform fsm_add_rows(old.account_id, tg_table_name, 0); end if;
          return new;
        end $$`,
        )
        .execute(db);
    } else {
      const { rows } = await sql<{
        name: string;
      }>`select name from sqlite_master where type = 'trigger' and (name like '%\\_count\\_insert' escape '\\' or name like '%\\_count\\_delete' escape '\\' or name like '%\\_count\\_update' escape '\\')`.execute(
        db,
      );
      for (const { name } of rows) await sql.raw(`drop trigger ${name}`).execute(db);
    }
    await sql`insert into row_counts (account_id, tbl, slot, value, version)
      select account_id, substr(name, 6), 0, value, version from counters where name like 'rows:%'`.execute(db);
    await sql`delete from counters where name like 'rows:%'`.execute(db);
  },
});
