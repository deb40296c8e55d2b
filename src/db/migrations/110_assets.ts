import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable, createLinkTable } from './scheme.js';
import { addCustomFields, addSearch } from './070_custom_fields.js';

/**
 * Maintenance, the equipment (PRODUCT §16): `assets` at a site (their client is the site's, kept
 * by a trigger when a site moves to another client), with a serial number unique in the account
 * (logically deleted assets keep theirs), custom fields and `q`; and a job's `assets`, a link
 * table whose inserts and deletes bump the job's version (as 100 does for `job_skills`).
 */
export const assets = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await createItemTable(
      db,
      dialect,
      'assets',
      (t) =>
        withTimes(
          t
            .addColumn('site_id', 'integer', (c) => c.notNull())
            .addColumn('client_id', 'integer', (c) => c.notNull())
            .addColumn('name', 'text', (c) => c.notNull())
            .addColumn('kind', 'text')
            .addColumn('make', 'text')
            .addColumn('model', 'text')
            .addColumn('serial_number', 'text')
            .addColumn('installed_on', 'text')
            .addColumn('warranty_until', 'text')
            .addColumn('service_interval_months', 'integer')
            .addColumn('notes', 'text')
            .addColumn('deleted', 'integer', flag),
        ),
      {
        counted: true,
        links: [
          { column: 'site_id', table: 'sites', onDelete: 'cascade' },
          { column: 'client_id', table: 'clients', onDelete: 'cascade' },
        ],
      },
    );
    await sql`create unique index assets_account_serial on assets (account_id, serial_number)`.execute(db);
    await addCustomFields(db, dialect, 'assets');
    await addSearch(db, dialect, 'assets', ['name', 'make', 'model', 'serial_number']);

    // An asset's client is its site's: a site moved to another client takes its assets along.
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create function fsm_sites_asset_client() returns trigger language plpgsql as $$
          begin
            update assets set client_id = new.client_id, version = version + 1
              where account_id = new.account_id and site_id = new.id and client_id <> new.client_id;
            return null;
          end $$`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger sites_asset_client after update of client_id on sites for each row
           when (old.client_id is distinct from new.client_id) execute function fsm_sites_asset_client()`,
        )
        .execute(db);
    } else {
      await sql
        .raw(
          `create trigger sites_asset_client after update of client_id on sites
           when old.client_id is not new.client_id begin
             update assets set client_id = new.client_id, version = version + 1
               where account_id = new.account_id and site_id = new.id and client_id <> new.client_id;
           end`,
        )
        .execute(db);
    }

    await createLinkTable(
      db,
      dialect,
      'job_assets',
      { column: 'job_id', table: 'jobs' },
      { column: 'asset_id', table: 'assets' },
    );
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create function fsm_job_assets_version() returns trigger language plpgsql as $$
          declare r record;
          begin
            if tg_op = 'DELETE' then r := old; else r := new; end if;
            update jobs set version = version + 1 where account_id = r.account_id and id = r.job_id;
            return null;
          end $$`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger job_assets_version after insert or delete on job_assets for each row execute function fsm_job_assets_version()`,
        )
        .execute(db);
    } else {
      for (const [event, row] of [
        ['insert', 'new'],
        ['delete', 'old'],
      ])
        await sql
          .raw(
            `create trigger job_assets_version_${event} after ${event} on job_assets begin
              update jobs set version = version + 1 where account_id = ${row}.account_id and id = ${row}.job_id;
            end`,
          )
          .execute(db);
    }
  },
});
