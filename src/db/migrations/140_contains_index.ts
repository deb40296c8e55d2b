import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { containsIndexName } from '../text.js';
import type { AnyDb } from './columns.js';

/**
 * The text members declared `contains` (src/collections/machinery/fields.ts) when this migration
 * was written, by table: `~` on them is answered through a trigram index (src/db/dialect.ts,
 * `containsMatch`). A member declared `contains` later gets its index from a migration of its own
 * with `addContainsIndex` (test/declared-lists.test.ts holds the declarations and the schema alike).
 */
export const CONTAINS: Record<string, string[]> = {
  jobs: ['title'],
  clients: ['name'],
  sites: ['name'],
  assets: ['name'],
  products: ['name'],
};

/**
 * A trigram index of a text column as `~` compares it: lowered (src/db/text.ts, lowerText).
 * PostgreSQL: a GIN index of `lower(column)` with pg_trgm's operator class, which the `like` of
 * `~` uses as it stands (pg_trgm is a trusted extension shipped with PostgreSQL: the database's
 * owner may create it). SQLite: a contentless FTS5 table of the lowered text, tokenized in
 * trigrams with no folding of its own (`case_sensitive 1`), kept by triggers in the statement's
 * transaction; a row's id is its rowid. Either is a pre-filter only: the `like` still decides.
 */
export async function addContainsIndex(db: AnyDb, dialect: Dialect, table: string, column: string): Promise<void> {
  const index = containsIndexName(table, column);
  if (dialect === 'postgres') {
    await sql.raw(`create extension if not exists pg_trgm`).execute(db);
    await sql.raw(`create index ${index} on ${table} using gin (lower(${column}) gin_trgm_ops)`).execute(db);
    return;
  }
  await sql
    .raw(
      `create virtual table ${index} using fts5(t, tokenize='trigram case_sensitive 1', content='', contentless_delete=1)`,
    )
    .execute(db);
  await sql
    .raw(`insert into ${index} (rowid, t) select id, fsm_lower(${column}) from ${table} where ${column} is not null`)
    .execute(db);
  await sql
    .raw(
      `create trigger ${index}_insert after insert on ${table} when new.${column} is not null begin
        insert into ${index} (rowid, t) values (new.id, fsm_lower(new.${column}));
      end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${index}_delete after delete on ${table} when old.${column} is not null begin
        delete from ${index} where rowid = old.id;
      end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${index}_update after update of ${column} on ${table} begin
        delete from ${index} where rowid = old.id;
        insert into ${index} (rowid, t) select new.id, fsm_lower(new.${column}) where new.${column} is not null;
      end`,
    )
    .execute(db);
}

/** `~` answered by trigram indexes (issue 51): the members declared `contains`. */
export const containsIndex = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const [table, columns] of Object.entries(CONTAINS))
      for (const column of columns) await addContainsIndex(db, dialect, table, column);
  },
});
