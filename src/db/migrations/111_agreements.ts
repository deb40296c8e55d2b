import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import {
  createItemTable,
  createLinkTable,
  linkKey,
  sqliteAtomically,
  sqliteRebuildWithLink,
  type Link,
} from './scheme.js';

/**
 * Service agreements (PRODUCT §16): the rule (`recurrence`, RFC 5545 RRULE text), the dates
 * (`skip_dates`: JSON text of `YYYY-MM-DD`), what each occurrence is made of, price (10^-4 of the
 * currency, as 040) and billing, `state`, and `rolled_on` (the account's local date the occurrences
 * were last made on: the daily roll takes the agreements whose date is behind). Their skills and assets are link tables bumping the agreement's version, as 100 does.
 * Jobs gain `agreement_id` and `occurrence` (the date); jobs and visits gain `generated`, the row
 * version the generator left (an occurrence nobody changed since still has that version);
 * the unique index `(account_id, agreement_id, occurrence)` makes one job per agreement and date
 * whatever the number of writers.
 */
const AGREEMENT_LINK: Link = { column: 'agreement_id', table: 'agreements', onDelete: 'set null' };

async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await createItemTable(
    db,
    dialect,
    'agreements',
    (t) =>
      withTimes(
        t
          .addColumn('client_id', 'integer', (c) => c.notNull())
          .addColumn('site_id', 'integer')
          .addColumn('user_id', 'integer')
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('job_title', 'text', (c) => c.notNull())
          .addColumn('job_description', 'text')
          .addColumn('start_date', 'text', (c) => c.notNull())
          .addColumn('end_date', 'text')
          .addColumn('recurrence', 'text', (c) => c.notNull())
          .addColumn('skip_dates', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('visit_time', 'text', (c) => c.notNull().defaultTo('09:00'))
          .addColumn('visit_minutes', 'integer', (c) => c.notNull().defaultTo(60))
          .addColumn('horizon_days', 'integer', (c) => c.notNull().defaultTo(90))
          .addColumn('price', 'bigint')
          .addColumn('billing', 'text', (c) => c.notNull().defaultTo('none'))
          .addColumn('state', 'text', (c) => c.notNull().defaultTo('active'))
          .addColumn('rolled_on', 'text')
          .addColumn('deleted', 'integer', flag),
      ),
    {
      counted: true,
      links: [
        { column: 'client_id', table: 'clients', onDelete: 'cascade' },
        { column: 'site_id', table: 'sites', onDelete: 'set null' },
        { column: 'user_id', table: 'users', onDelete: 'set null' },
      ],
    },
  );
  await sql`create index agreements_roll on agreements (account_id, state, rolled_on)`.execute(db);

  for (const [table, column, target] of [
    ['agreement_skills', 'skill_id', 'skills'],
    ['agreement_assets', 'asset_id', 'assets'],
  ] as const) {
    await createLinkTable(
      db,
      dialect,
      table,
      { column: 'agreement_id', table: 'agreements' },
      { column, table: target },
    );
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create function fsm_${table}_version() returns trigger language plpgsql as $$
            declare r record;
            begin
              if tg_op = 'DELETE' then r := old; else r := new; end if;
              update agreements set version = version + 1 where account_id = r.account_id and id = r.agreement_id;
              return null;
            end $$`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_version after insert or delete on ${table} for each row execute function fsm_${table}_version()`,
        )
        .execute(db);
    } else {
      for (const [event, row] of [
        ['insert', 'new'],
        ['delete', 'old'],
      ])
        await sql
          .raw(
            `create trigger ${table}_version_${event} after ${event} on ${table} begin
                update agreements set version = version + 1 where account_id = ${row}.account_id and id = ${row}.agreement_id;
              end`,
          )
          .execute(db);
    }
  }

  await db.schema.alterTable('jobs').addColumn('agreement_id', 'integer').execute();
  await db.schema.alterTable('jobs').addColumn('occurrence', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('generated', 'integer').execute();
  await db.schema.alterTable('visits').addColumn('generated', 'integer').execute();
  if (dialect === 'sqlite') await sqliteRebuildWithLink(db, 'jobs', AGREEMENT_LINK);
  await linkKey(db, dialect, 'jobs', AGREEMENT_LINK);
  await sql`create unique index jobs_agreement_occurrence on jobs (account_id, agreement_id, occurrence)`.execute(db);
}

export const agreements = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect === 'postgres') return up(db, dialect);
    // SQLite: one transaction of its own, so a process stopped half way leaves nothing done.
    await sqliteAtomically(
      db,
      async () =>
        (await sql`select 1 from sqlite_master where type = 'table' and name = 'agreements'`.execute(db)).rows.length >
        0,
      () => up(db, dialect),
    );
  },
});
