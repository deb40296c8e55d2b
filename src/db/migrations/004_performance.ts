import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Tables whose rows per account are counted by triggers into `counters` (name `rows:<table>`), so
 * an unfiltered list answers `recordsCount` without counting the account's rows each time.
 */
export const COUNTED_TABLES = ['users', 'statuses', 'clients', 'jobs', 'visits', 'workgroups', 'files'] as const;

/** The counter name of a table's row count. */
export const rowCounter = (table: string) => `rows:${table}`;

/** Text columns `~` is fast on with PostgreSQL's trigram indexes (the ones lists are searched by). */
const TRIGRAM_COLUMNS: [string, string][] = [
  ['jobs', 'title'],
  ['jobs', 'reference'],
  ['clients', 'name'],
  ['users', 'first_name'],
  ['users', 'last_name'],
];

/** Indexes for what lists sort and filter on, besides (account_id, id) which every table has. */
const INDEXES: [string, string, string[]][] = [
  ['users_account_last_name', 'users', ['account_id', 'last_name', 'id']],
  ['jobs_account_status', 'jobs', ['account_id', 'status_id', 'id']],
  ['jobs_account_due_date', 'jobs', ['account_id', 'due_date', 'id']],
  ['visits_account_start', 'visits', ['account_id', 'start_time', 'id']],
  ['visits_account_job', 'visits', ['account_id', 'job_id', 'id']],
  ['clients_account_name', 'clients', ['account_id', 'name', 'id']],
];

async function sqliteCounters(db: AnyDb, table: string) {
  const name = rowCounter(table);
  await sql
    .raw(
      `create trigger ${table}_count_insert after insert on ${table} begin
    insert into counters (account_id, name, value) values (new.account_id, '${name}', 1)
      on conflict (account_id, name) do update set value = value + 1;
  end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_count_delete after delete on ${table} begin
    update counters set value = value - 1 where account_id = old.account_id and name = '${name}';
  end`,
    )
    .execute(db);
}

async function postgresCounters(db: AnyDb, table: string) {
  await sql
    .raw(
      `create trigger ${table}_count after insert or delete on ${table} for each row execute function fsm_count_rows()`,
    )
    .execute(db);
}

/** PostgreSQL's pg_trgm, when the server has it and we may create it; without it `~` scans within the account. */
async function tryTrigram(db: AnyDb): Promise<boolean> {
  const available = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if (!available.rows[0]?.n) return false;
  await sql`savepoint trgm`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`release savepoint trgm`.execute(db);
    return true;
  } catch {
    await sql`rollback to savepoint trgm`.execute(db);
    return false;
  }
}

export const performance = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const [name, table, columns] of INDEXES)
      await db.schema.createIndex(name).on(table).columns(columns).execute();

    if (dialect === 'postgres') {
      await sql
        .raw(
          `create or replace function fsm_count_rows() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then
            insert into counters (account_id, name, value) values (new.account_id, 'rows:' || tg_table_name, 1)
              on conflict (account_id, name) do update set value = counters.value + 1;
            return new;
          end if;
          update counters set value = value - 1 where account_id = old.account_id and name = 'rows:' || tg_table_name;
          return old;
        end $$`,
        )
        .execute(db);
      if (await tryTrigram(db)) {
        for (const [table, column] of TRIGRAM_COLUMNS) {
          await sql
            .raw(`create index ${table}_${column}_trgm on ${table} using gin (lower(${column}) gin_trgm_ops)`)
            .execute(db);
        }
      }
    }
    for (const table of COUNTED_TABLES) {
      if (dialect === 'postgres') await postgresCounters(db, table);
      else await sqliteCounters(db, table);
      // Existing rows: the triggers count from here on.
      await sql
        .raw(
          `insert into counters (account_id, name, value)
        select account_id, '${rowCounter(table)}', count(*) from ${table} where true group by account_id
        on conflict (account_id, name) do update set value = excluded.value`,
        )
        .execute(db);
    }
  },
});
