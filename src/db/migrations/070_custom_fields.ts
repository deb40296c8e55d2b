import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { searchWords } from '../text.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable, versioned } from './scheme.js';

/** The tables whose items carry `customFields` today (PRODUCT §12); later tables add the column in their own migration. */
const CUSTOM = ['users', 'clients', 'jobs', 'visits'];

/** The tables `q` searches today, and the columns of their searched text (as the declarations list them). */
/** An address's columns, searched as part of the item's text (also by migration 090). */
export const ADDRESS = [
  'address_line1',
  'address_line2',
  'address_city',
  'address_region',
  'address_postcode',
  'address_country',
];
const SEARCHED: Record<string, string[]> = {
  users: ['first_name', 'last_name', 'company_name', 'email', 'login'],
  clients: ['name', 'company_name', 'email', 'notes', ...ADDRESS],
  jobs: ['title', 'reference', 'description', 'order_number', ...ADDRESS],
  notes: ['body'],
};

/**
 * A table's `custom_fields`: JSONB on PostgreSQL (with a GIN index for `customFields.<key> = …`),
 * JSON text on SQLite; `{}` when the item has none. Exported for the migrations of later tables.
 */
export async function addCustomFields(db: AnyDb, dialect: Dialect, table: string): Promise<void> {
  if (dialect === 'postgres') {
    await sql.raw(`alter table ${table} add column custom_fields jsonb not null default '{}'`).execute(db);
    await sql
      .raw(`create index ${table}_custom_fields on ${table} using gin (custom_fields jsonb_path_ops)`)
      .execute(db);
  } else {
    await sql.raw(`alter table ${table} add column custom_fields text not null default '{}'`).execute(db);
  }
}

/**
 * A table's full-text index (`q`): `search_text`, the folded words the application writes with the
 * row (src/collections/machinery/search.ts), indexed by PostgreSQL as its `simple` tsvector
 * (`search_vector`, a stored generated column: PostgreSQL only) in a GIN index, and by SQLite as an FTS5 table with the row as its external content, kept by
 * triggers in the same transaction. `rows` fills it for the rows already there.
 */
export async function addSearch(db: AnyDb, dialect: Dialect, table: string, columns: string[]): Promise<void> {
  await sql.raw(`alter table ${table} add column search_text text`).execute(db);
  // The rows already there: their words, as the application writes them from now on. Filling a
  // column the API does not show is no change of the item: its row version stays.
  const rows = await sql<Record<string, unknown>>`select ${sql.join(
    ['id', ...columns].map((c) => sql.ref(c)),
  )} from ${sql.table(table)}`.execute(db);
  if (rows.rows.length) {
    await sql.raw(`drop trigger ${table}_version${dialect === 'postgres' ? ` on ${table}` : ''}`).execute(db);
    for (const row of rows.rows) {
      const text = columns.flatMap((c) => (typeof row[c] === 'string' ? searchWords(row[c] as string) : [])).join(' ');
      await sql`update ${sql.table(table)} set search_text = ${text} where id = ${row.id}`.execute(db);
    }
    await versioned(db, dialect, table);
  }
  if (dialect === 'postgres') {
    // Stored, so ranking reads it instead of parsing the text of every match again.
    await sql
      .raw(
        `alter table ${table} add column search_vector tsvector generated always as (to_tsvector('simple', coalesce(search_text, ''))) stored`,
      )
      .execute(db);
    await sql.raw(`create index ${table}_search on ${table} using gin (search_vector)`).execute(db);
    return;
  }
  await sql
    .raw(
      `create virtual table ${table}_search using fts5(search_text, content='${table}', content_rowid='id', tokenize='unicode61 remove_diacritics 0')`,
    )
    .execute(db);
  await sql.raw(`insert into ${table}_search (${table}_search) values ('rebuild')`).execute(db);
  await sql
    .raw(
      `create trigger ${table}_search_insert after insert on ${table} begin
        insert into ${table}_search (rowid, search_text) values (new.id, new.search_text);
      end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_search_delete after delete on ${table} begin
        insert into ${table}_search (${table}_search, rowid, search_text) values ('delete', old.id, old.search_text);
      end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_search_update after update of search_text on ${table} begin
        insert into ${table}_search (${table}_search, rowid, search_text) values ('delete', old.id, old.search_text);
        insert into ${table}_search (rowid, search_text) values (new.id, new.search_text);
      end`,
    )
    .execute(db);
}

/**
 * Custom fields and search (PRODUCT §12): the definitions, the unique values, the `custom_fields`
 * columns and the search indexes.
 */
export const customFields = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await createItemTable(db, dialect, 'custom_field_definitions', (t) =>
      withTimes(
        t
          .addColumn('collection', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('label', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('options', 'text')
          .addColumn('is_required', 'integer', flag)
          .addColumn('is_unique', 'integer', flag)
          .addColumn('client_id', 'text')
          .addColumn('deleted', 'integer', flag),
      ),
    );
    await sql
      .raw('create unique index custom_field_definitions_key on custom_field_definitions (account_id, collection, key)')
      .execute(db);
    // The values of unique custom fields: the index refuses a second item with the same value,
    // whichever transaction commits first (src/collections/machinery/custom.ts).
    await db.schema
      .createTable('custom_unique_values')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('collection', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('item_id', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('custom_unique_values_pkey', ['account_id', 'collection', 'key', 'value'])
      .execute();
    await sql
      .raw('create index custom_unique_values_item on custom_unique_values (account_id, collection, item_id)')
      .execute(db);
    for (const table of CUSTOM) await addCustomFields(db, dialect, table);
    for (const [table, columns] of Object.entries(SEARCHED)) await addSearch(db, dialect, table, columns);
  },
});
