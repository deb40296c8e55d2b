import { sql, type CreateTableBuilder } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * The key scheme of every table that belongs to an account, stated once (docs/design.md, "Keys"),
 * and what the collection declarations need of a table: its row version and, when `counted`, its
 * row-count triggers. Migrations 018 and 019 gave today's tables all of it; a new table gets it by
 * `createItemTable` (or `createLinkTable`) in its own migration. Frozen like the migrations that
 * call it: never change what a function here does (an old migration would then do something else);
 * a new scheme gets new functions.
 *
 * - An item has `id` (unique in the table, from one sequence) and `account_id`; its key is
 *   `(account_id, id)`: PostgreSQL's primary key, SQLite's unique index `<table>_account_id` beside
 *   the rowid `id` (the fastest lookup SQLite has; ids stay unique on both dialects).
 * - A link to another item of the account is a foreign key `(account_id, <column>)` referencing
 *   `(account_id, id)`: the database itself refuses a link into another account. Its column is
 *   indexed with the account, for the check a delete of the linked item makes.
 * - `onDelete: 'set null'` nulls the link's column only: PostgreSQL's `ON DELETE SET NULL (column)`.
 *   SQLite would null every column of the key, `account_id` too, so there the key takes no action
 *   and the trigger `<target>_delete_nulls_<table>_<column>` nulls the column in the same statement.
 * - Every unique constraint includes `account_id`. A value unique in the whole service lives in a
 *   table of its own without `account_id` (a reference table, such as `logins`).
 */
export type OnDelete = 'cascade' | 'set null' | 'restrict';

export interface Link {
  /** The column holding the linked item's id. */
  column: string;
  /** The linked item's table, itself an item table of this scheme. */
  table: string;
  /** What deleting the linked item does to this row ('restrict': the delete is refused). */
  onDelete: OnDelete;
}

export interface ItemTableOptions {
  links?: Link[];
  /** The rows of the table are counted per account (the collection is declared `counted`). */
  counted?: boolean;
}

type Columns = (t: CreateTableBuilder<string, never>) => CreateTableBuilder<string, string>;

/**
 * A new table of items: `id`, `account_id` (the rows go with their account), the columns
 * `columns` adds, `version`, the key, the links with their indexes, the version trigger, and the
 * count triggers when counted.
 */
export async function createItemTable(
  db: AnyDb,
  dialect: Dialect,
  table: string,
  columns: Columns,
  opts: ItemTableOptions = {},
): Promise<void> {
  const start = db.schema.createTable(table) as CreateTableBuilder<string, never>;
  const withId =
    dialect === 'postgres'
      ? start.addColumn('id', 'serial', (c) => c.notNull())
      : start.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  let t = columns(
    withId.addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade')),
  ).addColumn('version', 'integer', (c) => c.notNull().defaultTo(1));
  if (dialect === 'sqlite') for (const l of opts.links ?? []) t = withSqliteLink(t, table, l);
  await t.execute();
  await itemKey(db, dialect, table);
  for (const l of opts.links ?? []) {
    await linkKey(db, dialect, table, l);
    await sql.raw(`create index ${table}_${l.column} on ${table} (account_id, ${l.column})`).execute(db);
  }
  await versioned(db, dialect, table);
  if (opts.counted) await counted(db, dialect, table);
}

/**
 * A new table linking items of two tables (an association list): `account_id` and the two id
 * columns, keyed by all three, each link deleted with either item. The items at both ends present
 * the list: the migration that creates it also bumps their versions when a link comes or goes (as
 * 011 does for workgroup_members).
 */
export async function createLinkTable(
  db: AnyDb,
  dialect: Dialect,
  table: string,
  own: Omit<Link, 'onDelete'>,
  other: Omit<Link, 'onDelete'>,
): Promise<void> {
  const links: Link[] = [
    { ...own, onDelete: 'cascade' },
    { ...other, onDelete: 'cascade' },
  ];
  let t = db.schema
    .createTable(table)
    .addColumn('account_id', 'integer', (c) => c.notNull())
    .addColumn(own.column, 'integer', (c) => c.notNull())
    .addColumn(other.column, 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pkey`, ['account_id', own.column, other.column]);
  if (dialect === 'sqlite') for (const l of links) t = withSqliteLink(t, table, l);
  await t.execute();
  for (const l of links) await linkKey(db, dialect, table, l);
  await sql.raw(`create index ${table}_${other.column} on ${table} (account_id, ${other.column})`).execute(db);
}

/** SQLite's foreign key of a link, inside its CREATE TABLE (SQLite cannot add one later). */
function withSqliteLink<C extends string>(t: CreateTableBuilder<string, C>, table: string, l: Link) {
  return t.addForeignKeyConstraint(
    `${table}_${l.column}_fkey`,
    ['account_id', l.column] as C[],
    l.table,
    ['account_id', 'id'],
    (k) => k.onDelete(l.onDelete === 'cascade' ? 'cascade' : 'no action'),
  );
}

/** The same, as the text of a table constraint: for tables SQLite rebuilds (migration 019). */
export const sqliteLinkClause = (table: string, l: Link): string =>
  `constraint ${table}_${l.column}_fkey foreign key (account_id, ${l.column}) references ${l.table} (account_id, id) on delete ${l.onDelete === 'cascade' ? 'cascade' : 'no action'}`;

/** The key `(account_id, id)` of an item table (which has no primary key yet on PostgreSQL). */
export async function itemKey(db: AnyDb, dialect: Dialect, table: string): Promise<void> {
  await sql
    .raw(
      dialect === 'postgres'
        ? `alter table ${table} add constraint ${table}_pkey primary key (account_id, id)`
        : `create unique index ${table}_account_id on ${table} (account_id, id)`,
    )
    .execute(db);
}

/**
 * A link's foreign key on PostgreSQL (SQLite's is in its CREATE TABLE), and on SQLite the trigger
 * that does a SET NULL.
 */
export async function linkKey(db: AnyDb, dialect: Dialect, table: string, l: Link): Promise<void> {
  if (dialect === 'postgres') {
    const action = { cascade: 'cascade', 'set null': `set null (${l.column})`, restrict: 'no action' }[l.onDelete];
    await sql
      .raw(
        `alter table ${table} add constraint ${table}_${l.column}_fkey foreign key (account_id, ${l.column})
        references ${l.table} (account_id, id) on delete ${action}`,
      )
      .execute(db);
  } else if (l.onDelete === 'set null') {
    await sql
      .raw(
        `create trigger ${l.table}_delete_nulls_${table}_${l.column} after delete on ${l.table} begin
        update ${table} set ${l.column} = null where account_id = old.account_id and ${l.column} = old.id;
      end`,
      )
      .execute(db);
  }
}

/**
 * The row version of an item (its ETag, PRODUCT §7): a `version` column (made here unless the
 * table has one) moved by a trigger on every UPDATE, whoever runs it (the pipeline, a rule, a SET
 * NULL). PostgreSQL's `fsm_bump_version` is migration 011's.
 */
export async function versioned(db: AnyDb, dialect: Dialect, table: string): Promise<void> {
  const { rows } =
    dialect === 'postgres'
      ? await sql<{ n: number }>`select count(*)::int as n from information_schema.columns
          where table_schema = current_schema() and table_name = ${table} and column_name = 'version'`.execute(db)
      : await sql<{ n: number }>`select count(*) as n from pragma_table_info(${table}) where name = 'version'`.execute(
          db,
        );
  if (!Number(rows[0].n))
    await sql.raw(`alter table ${table} add column version integer not null default 1`).execute(db);
  await sql
    .raw(
      dialect === 'postgres'
        ? `create trigger ${table}_version before update on ${table} for each row execute function fsm_bump_version()`
        : // SQLite cannot change NEW in a trigger: a second update sets the version; the guard ends it.
          `create trigger ${table}_version after update on ${table} when new.version = old.version begin
          update ${table} set version = old.version + 1 where id = new.id;
        end`,
    )
    .execute(db);
}

/**
 * Row counts per account kept in `row_counts` (migration 012) by triggers in the transaction of
 * every change, cascades included; the rows already there are counted into slot 0. PostgreSQL's
 * run once per statement over its transition table (`fsm_count_statement`, migration 015), SQLite's
 * once per row (one writer: slot 0).
 */
export async function counted(db: AnyDb, dialect: Dialect, table: string): Promise<void> {
  if (dialect === 'postgres') {
    for (const [op, rows] of [
      ['insert', 'new'],
      ['update', 'new'],
      ['delete', 'old'],
    ]) {
      await sql
        .raw(
          `create trigger ${table}_rows_${op} after ${op} on ${table} referencing ${rows} table as changed
          for each statement execute function fsm_count_statement()`,
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
  // Slot 0 takes the rows not counted in other slots.
  await sql
    .raw(
      `insert into row_counts (account_id, tbl, slot, value, version)
      select account_id, '${table}', 0,
        count(*) - coalesce((select sum(r.value) from row_counts r where r.account_id = t.account_id and r.tbl = '${table}' and r.slot <> 0), 0), 1
      from ${table} t where true group by account_id
      on conflict (account_id, tbl, slot) do update set value = excluded.value, version = row_counts.version + 1`,
    )
    .execute(db);
}

/**
 * SQLite cannot add a foreign key to a table: the table is made again from its own definition with
 * the link's key added (its columns, constraints, rows, rowids, indexes, triggers and AUTOINCREMENT
 * counter kept), as migration 050 did for `site_id`. The caller has foreign keys switched off (so
 * dropping the old table cascades to nothing) and runs this in a transaction of its own.
 */
export async function sqliteRebuildWithLink(db: AnyDb, table: string, l: Link): Promise<void> {
  const { rows: def } = await sql<{ sql: string }>`select sql from sqlite_master
    where type = 'table' and name = ${table}`.execute(db);
  const { rows: kept } = await sql<{ sql: string }>`select sql from sqlite_master
    where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null order by type, name`.execute(db);
  const { rows: seq } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(db);
  const text = def[0].sql;
  const header = new RegExp(`^create table\\s+("${table}"|'${table}'|\`${table}\`|${table})\\s*\\(`, 'i');
  if (!header.test(text)) throw new Error(`${table}: unexpected table definition`);
  const end = text.lastIndexOf(')');
  const created =
    text.slice(0, end).replace(header, `create table ${table}__new (`) +
    `, ${sqliteLinkClause(table, l)}` +
    text.slice(end);
  const { rows: columns } = await sql<{
    name: string;
  }>`select name from pragma_table_info(${table}) order by cid`.execute(db);
  const names = columns.map((c) => c.name).join(', ');
  await sql`pragma legacy_alter_table = on`.execute(db);
  try {
    await sql.raw(created).execute(db);
    await sql.raw(`insert into ${table}__new (${names}) select ${names} from ${table}`).execute(db);
    await sql.raw(`drop table ${table}`).execute(db);
    await sql.raw(`alter table ${table}__new rename to ${table}`).execute(db);
    for (const k of kept) await sql.raw(k.sql).execute(db);
    await sql`delete from sqlite_sequence where name in (${table}, ${`${table}__new`})`.execute(db);
    if (seq.length) await sql`insert into sqlite_sequence (name, seq) values (${table}, ${seq[0].seq})`.execute(db);
  } finally {
    await sql`pragma legacy_alter_table = off`.execute(db);
  }
}

/**
 * A SQLite migration in one transaction of its own (Kysely runs SQLite's migrations without one),
 * foreign keys switched off outside it and checked before the commit: a process stopped half way
 * leaves nothing done. `done` tells a migration already applied (nothing is run again).
 */
export async function sqliteAtomically(db: AnyDb, done: () => Promise<boolean>, up: () => Promise<void>) {
  if (await done()) return;
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin immediate`.execute(db);
    try {
      await up();
      const { rows } = await sql`pragma foreign_key_check`.execute(db);
      if (rows.length) throw new Error('rows link outside their account or to nothing');
      await sql`commit`.execute(db);
    } catch (err) {
      await sql`rollback`.execute(db);
      throw err;
    }
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
