import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';
import { linkKey, sqliteAtomically, sqliteRebuildWithLink, type Link } from './scheme.js';

/**
 * Agreements' billing (PRODUCT §16): invoices gain `agreement_id` (the agreement a draft bills),
 * `agreement_period` (the first day of the period it bills, `monthly` / `quarterly` / `yearly`) and
 * `agreement_visit_id` (the visit it bills, `perVisit`). The unique indexes make one invoice per
 * agreement and period, and one per visit, whatever the number of writers (NULLs never collide:
 * invoices made by hand have none). Agreements gain `billed_through`, the first day of the last
 * period billed: a draft the user deleted (drafts are deleted physically) is not made again.
 */
const LINK: Link = { column: 'agreement_id', table: 'agreements', onDelete: 'set null' };

async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema.alterTable('invoices').addColumn('agreement_id', 'integer').execute();
  await db.schema.alterTable('invoices').addColumn('agreement_period', 'text').execute();
  await db.schema.alterTable('invoices').addColumn('agreement_visit_id', 'integer').execute();
  await db.schema.alterTable('agreements').addColumn('billed_through', 'text').execute();
  if (dialect === 'sqlite') await sqliteRebuildWithLink(db, 'invoices', LINK);
  await linkKey(db, dialect, 'invoices', LINK);
  await sql`create unique index invoices_agreement_period on invoices (account_id, agreement_id, agreement_period)`.execute(
    db,
  );
  await sql`create unique index invoices_agreement_visit on invoices (account_id, agreement_visit_id)`.execute(db);
}

export const agreementBilling = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect === 'postgres') return up(db, dialect);
    await sqliteAtomically(
      db,
      async () =>
        (await sql`select 1 from pragma_table_info('invoices') where name = 'agreement_id'`.execute(db)).rows.length >
        0,
      () => up(db, dialect),
    );
  },
});
