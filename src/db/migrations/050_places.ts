import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable, linkKey, sqliteLinkClause, type Link } from './scheme.js';

/**
 * Places (PRODUCT §10): a location on every address (`address_lat`, `address_lng`, indexed with the
 * account for `near`'s bounding box), sites and contacts of clients, and a job's site.
 */
const ADDRESS = ['line1', 'line2', 'city', 'region', 'postcode', 'country'].map((m) => `address_${m}`);
const SITE_LINK: Link = { column: 'site_id', table: 'sites', onDelete: 'set null' };

async function locate(db: AnyDb, table: string): Promise<void> {
  await db.schema.alterTable(table).addColumn('address_lat', 'double precision').execute();
  await db.schema.alterTable(table).addColumn('address_lng', 'double precision').execute();
  // The longitude too, so the box's second range is checked in the index before any row is read.
  await sql.raw(`create index ${table}_address_lat on ${table} (account_id, address_lat, address_lng)`).execute(db);
}

async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await locate(db, 'clients');
  await locate(db, 'jobs');
  await createItemTable(
    db,
    dialect,
    'sites',
    (t) => {
      let s = t.addColumn('client_id', 'integer', (c) => c.notNull()).addColumn('name', 'text', (c) => c.notNull());
      for (const col of ADDRESS) s = s.addColumn(col, 'text');
      return withTimes(
        s
          .addColumn('address_lat', 'double precision')
          .addColumn('address_lng', 'double precision')
          .addColumn('notes', 'text')
          .addColumn('deleted', 'integer', flag),
      );
    },
    { links: [{ column: 'client_id', table: 'clients', onDelete: 'cascade' }], counted: true },
  );
  await sql.raw(`create index sites_address_lat on sites (account_id, address_lat, address_lng)`).execute(db);
  await createItemTable(
    db,
    dialect,
    'contacts',
    (t) =>
      withTimes(
        t
          .addColumn('client_id', 'integer', (c) => c.notNull())
          .addColumn('first_name', 'text', (c) => c.notNull())
          .addColumn('last_name', 'text')
          .addColumn('title', 'text')
          .addColumn('email', 'text')
          .addColumn('phone', 'text')
          .addColumn('mobile', 'text')
          .addColumn('is_primary', 'integer', flag)
          .addColumn('deleted', 'integer', flag),
      ),
    { links: [{ column: 'client_id', table: 'clients', onDelete: 'cascade' }], counted: true },
  );
  // At most one primary contact per client; the rules clear the old one first (contacts/index.ts).
  await sql
    .raw(`create unique index contacts_primary on contacts (account_id, client_id) where is_primary = 1`)
    .execute(db);
  await db.schema.alterTable('jobs').addColumn('site_id', 'integer').execute();
  if (dialect === 'sqlite') await sqliteWithSiteKey(db);
  await linkKey(db, dialect, 'jobs', SITE_LINK);
  await sql.raw(`create index jobs_site_id on jobs (account_id, site_id)`).execute(db);
}

/**
 * SQLite cannot add a foreign key to a table: `jobs` is made again from its own definition with the
 * key added (its columns, constraints, rows, rowids, indexes, triggers and AUTOINCREMENT counter kept).
 */
async function sqliteWithSiteKey(db: AnyDb): Promise<void> {
  const { rows: def } = await sql<{ sql: string }>`select sql from sqlite_master
    where type = 'table' and name = 'jobs'`.execute(db);
  const { rows: kept } = await sql<{ sql: string }>`select sql from sqlite_master
    where tbl_name = 'jobs' and type in ('index', 'trigger') and sql is not null order by type, name`.execute(db);
  const { rows: seq } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'jobs'`.execute(db);
  const text = def[0].sql;
  const header = /^create table\s+("jobs"|'jobs'|`jobs`|jobs)\s*\(/i;
  if (!header.test(text)) throw new Error('jobs: unexpected table definition');
  const end = text.lastIndexOf(')');
  const created =
    text.slice(0, end).replace(header, 'create table jobs__new (') +
    `, ${sqliteLinkClause('jobs', SITE_LINK)}` +
    text.slice(end);
  const { rows: columns } = await sql<{
    name: string;
  }>`select name from pragma_table_info('jobs') order by cid`.execute(db);
  const names = columns.map((c) => c.name).join(', ');
  // Foreign keys are off (places() below): dropping `jobs` must not cascade to its visits.
  await sql`pragma legacy_alter_table = on`.execute(db);
  try {
    await sql.raw(created).execute(db);
    await sql.raw(`insert into jobs__new (${names}) select ${names} from jobs`).execute(db);
    await sql`drop table jobs`.execute(db);
    await sql`alter table jobs__new rename to jobs`.execute(db);
    for (const k of kept) await sql.raw(k.sql).execute(db);
    await sql`delete from sqlite_sequence where name in ('jobs', 'jobs__new')`.execute(db);
    if (seq.length) await sql`insert into sqlite_sequence (name, seq) values ('jobs', ${seq[0].seq})`.execute(db);
  } finally {
    await sql`pragma legacy_alter_table = off`.execute(db);
  }
}

export const places = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect === 'postgres') return up(db, dialect);
    // SQLite: one transaction of its own (Kysely runs SQLite's migrations without one), so a
    // process stopped half way leaves nothing done; foreign keys are switched off outside it.
    const { rows: done } = await sql`select 1 from sqlite_master where type = 'table' and name = 'sites'`.execute(db);
    if (done.length) return;
    await sql`pragma foreign_keys = off`.execute(db);
    try {
      await sql`begin immediate`.execute(db);
      try {
        await up(db, dialect);
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
  },
});
