import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * PostgreSQL: row counts moved once per statement instead of once per row. A row-level trigger ran
 * two PL/pgSQL calls and an UPDATE of the count slot for each row (a ten-item write: ten of each,
 * a quarter of the database's time in W4 and W5); a statement-level one reads the statement's rows
 * from its transition table and moves each account's slot once. `fsm_count_statement` is the
 * function; src/db/counted.ts makes the triggers (`<table>_rows_insert|update|delete`) at start,
 * once this has dropped the row-level `<table>_count` ones. The version moves by one per statement
 * that touched the account's rows: it still moves on every change, which is all the count cache needs.
 */
export const countStatements = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect !== 'postgres') return;
    await sql`create or replace function fsm_count_statement() returns trigger language plpgsql as $$
      declare r record;
      begin
        for r in select account_id, count(*)::integer as n from changed group by account_id loop
          perform fsm_add_rows(r.account_id, tg_table_name, case tg_op when 'INSERT' then r.n when 'DELETE' then -r.n else 0 end);
        end loop;
        return null;
      end $$`.execute(db);
    const { rows } = await sql<{
      name: string;
      tbl: string;
    }>`select t.tgname as name, c.relname as tbl from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where t.tgname like '%\_count' and not t.tgisinternal and t.tgfoid = 'fsm_count_rows'::regproc`.execute(db);
    for (const r of rows) await sql.raw(`drop trigger ${r.name} on ${r.tbl}`).execute(db);
  },
});
