import { sql } from 'kysely';
import type { Database } from './index.js';
import { ensureForTables, untyped, type Executor } from './tx.js';

const slots = (db: Executor, table: string, accountId: number) =>
  untyped(db).selectFrom('row_counts').where('account_id', '=', accountId).where('tbl', '=', table);

/**
 * The count and change version of a counted table in an account, as one row (`value`, `version`):
 * the sums over the table's slots in `row_counts` (migration 012). `version` is null before the
 * account's first change to the table. `accountId` may be a compiled statement's slot.
 */
export const rowCount = (db: Executor, table: string, accountId: number) =>
  slots(db, table, accountId).select((eb) => [
    eb.fn.coalesce(eb.fn.sum<number>('value'), eb.lit(0)).as('value'),
    eb.fn.sum<number>('version').as('version'),
  ]);

/** The count alone (0 before the account's first row), as a subquery. */
export const rowCountValue = (db: Executor, table: string, accountId: number) =>
  slots(db, table, accountId).select((eb) => eb.fn.coalesce(eb.fn.sum<number>('value'), eb.lit(0)).as('value'));

/** The change version alone, as a subquery. */
export const rowVersion = (db: Executor, table: string, accountId: number) =>
  slots(db, table, accountId).select((eb) => eb.fn.sum<number>('version').as('version'));

async function hasTrigger(db: Executor, dialect: Database['dialect']['name'], name: string): Promise<boolean> {
  const { rows } =
    dialect === 'postgres'
      ? await sql<{
          n: number;
        }>`select count(*)::int as n from pg_trigger where tgname = ${name} and not tgisinternal`.execute(db)
      : await sql<{
          n: number;
        }>`select count(*) as n from sqlite_master where type = 'trigger' and name = ${name}`.execute(db);
  return Number(rows[0]?.n) > 0;
}

/**
 * Row counts per account and table, kept by triggers in the same transaction as every change
 * (cascades included) in `row_counts`, one row per slot: the count is the sum of `value`, and the
 * sum of `version` moves on every insert, update and delete (the count cache of
 * src/collections/machinery/count.ts is keyed by it). On PostgreSQL a transaction writes the slot
 * of its connection (`fsm.slot`, see src/db/index.ts), so concurrent writers of one account never
 * wait on a count; SQLite has one writer and slot 0. Which tables are counted is a flag on each
 * collection's declaration; this makes the triggers of any counted table that has none yet, at
 * start and after the migrations, and counts its existing rows. PostgreSQL's triggers run once per
 * statement, over its transition table (`fsm_count_statement`, migration 015); SQLite's once per row.
 */
export async function ensureRowCounters(database: Database, tables: readonly string[]): Promise<void> {
  const first = (table: string) =>
    database.dialect.name === 'postgres' ? `${table}_rows_insert` : `${table}_count_insert`;
  await ensureForTables(
    database,
    tables,
    'counters',
    (db, table) => hasTrigger(db, database.dialect.name, first(table)),
    async (db, table) => {
      if (database.dialect.name === 'postgres') {
        for (const [op, rows] of [
          ['insert', 'new'],
          ['update', 'new'],
          ['delete', 'old'],
        ]) {
          await sql
            .raw(
              `create trigger ${table}_rows_${op} after ${op} on ${table} referencing ${rows} table as changed for each statement execute function fsm_count_statement()`,
            )
            .execute(db);
        }
      } else {
        await sql
          .raw(
            `create trigger ${table}_count_insert after insert on ${table} begin
        insert into row_counts (account_id, tbl, slot, value, version) values (new.account_id, '${table}', 0, 1, 1)
          on conflict (account_id, tbl, slot) do update set value = value + 1, version = version + 1;
      end`,
          )
          .execute(db);
        await sql
          .raw(
            `create trigger ${table}_count_delete after delete on ${table} begin
        update row_counts set value = value - 1, version = version + 1 where account_id = old.account_id and tbl = '${table}' and slot = 0;
      end`,
          )
          .execute(db);
        await sql
          .raw(
            `create trigger ${table}_count_update after update on ${table} begin
        update row_counts set version = version + 1 where tbl = '${table}' and slot = 0 and account_id in (old.account_id, new.account_id);
      end`,
          )
          .execute(db);
      }
      // Slot 0 takes the rows not counted in other slots (a table whose triggers were missing for a while).
      await sql
        .raw(
          `insert into row_counts (account_id, tbl, slot, value, version)
      select account_id, '${table}', 0,
        count(*) - coalesce((select sum(r.value) from row_counts r where r.account_id = t.account_id and r.tbl = '${table}' and r.slot <> 0), 0), 1
      from ${table} t where true group by account_id
      on conflict (account_id, tbl, slot) do update set value = excluded.value, version = row_counts.version + 1`,
        )
        .execute(db);
    },
  );
}
