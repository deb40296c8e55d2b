import { sql } from 'kysely';
import type { Database } from './index.js';
import { ensureForTables, type Executor } from './tx.js';

/** The counter name of a table's row count (and change version) in `counters`. */
export const rowCounter = (table: string) => `rows:${table}`;

async function hasTrigger(db: Executor, dialect: Database['dialect'], name: string): Promise<boolean> {
  const { rows } = dialect === 'postgres'
    ? await sql<{ n: number }>`select count(*)::int as n from pg_trigger where tgname = ${name} and not tgisinternal`.execute(db)
    : await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'trigger' and name = ${name}`.execute(db);
  return Number(rows[0]?.n) > 0;
}

/**
 * Row counts per account and table, kept by triggers in the same transaction as every change
 * (cascades included): `value` is the number of rows, `version` moves on every insert, update and
 * delete (the count cache of src/collections/machinery/count.ts is keyed by it). Which tables are
 * counted is a flag on each collection's declaration; this makes the triggers of any counted table
 * that has none yet, at start and after the migrations, and counts its existing rows. PostgreSQL's
 * trigger function `fsm_count_rows` comes from migrations 004 and 006.
 */
export async function ensureRowCounters(database: Database, tables: readonly string[]): Promise<void> {
  const first = (table: string) => (database.dialect === 'postgres' ? `${table}_count` : `${table}_count_insert`);
  await ensureForTables(database, tables, 'counters', (db, table) => hasTrigger(db, database.dialect, first(table)), async (db, table) => {
    const name = rowCounter(table);
    if (database.dialect === 'postgres') {
      await sql.raw(`create trigger ${table}_count after insert or update or delete on ${table} for each row execute function fsm_count_rows()`).execute(db);
    } else {
      await sql.raw(`create trigger ${table}_count_insert after insert on ${table} begin
        insert into counters (account_id, name, value, version) values (new.account_id, '${name}', 1, 1)
          on conflict (account_id, name) do update set value = value + 1, version = version + 1;
      end`).execute(db);
      await sql.raw(`create trigger ${table}_count_delete after delete on ${table} begin
        update counters set value = value - 1, version = version + 1 where account_id = old.account_id and name = '${name}';
      end`).execute(db);
      await sql.raw(`create trigger ${table}_count_update after update on ${table} begin
        update counters set version = version + 1 where name = '${name}' and account_id in (old.account_id, new.account_id);
      end`).execute(db);
    }
    await sql.raw(`insert into counters (account_id, name, value, version)
      select account_id, '${name}', count(*), 1 from ${table} where true group by account_id
      on conflict (account_id, name) do update set value = excluded.value, version = counters.version + 1`).execute(db);
  });
}
