import { sql } from 'kysely';
import type { Database } from './index.js';
import { ensureForTables, type Executor } from './tx.js';

async function hasVersion(db: Executor, table: string): Promise<boolean> {
  const tables = await db.introspection.getTables();
  return tables.some((t) => t.name === table && t.columns.some((c) => c.name === 'version'));
}

/**
 * A row version per item, the source of its strong ETag (PRODUCT §7), for every collection table:
 * migration 011 gave the tables of its day a `version` column and the triggers that bump it on
 * every UPDATE (whoever runs it: the pipeline, a rule, ON DELETE SET NULL); a collection added
 * later gets the same here, at start, after the migrations. PostgreSQL's `fsm_bump_version` comes
 * from migration 011.
 */
export async function ensureRowVersions(database: Database, tables: readonly string[]): Promise<void> {
  await ensureForTables(database, tables, 'versions', hasVersion, async (db, table) => {
    await sql.raw(`alter table ${table} add column version integer not null default 1`).execute(db);
    if (database.dialect.name === 'postgres') {
      await sql
        .raw(
          `create trigger ${table}_version before update on ${table} for each row execute function fsm_bump_version()`,
        )
        .execute(db);
    } else {
      await sql
        .raw(
          `create trigger ${table}_version after update on ${table} when new.version = old.version begin
        update ${table} set version = old.version + 1 where id = new.id;
      end`,
        )
        .execute(db);
    }
  });
}
