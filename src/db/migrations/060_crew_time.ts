import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable } from './scheme.js';

/**
 * Crew time (PRODUCT §11): a visit's check-in and check-out, timesheet entries, location pings and
 * unavailabilities. Times are epoch ms; a location is JSON text `{lat, lng, accuracy}` on visits.
 * One user's entries never overlap: the writer locks the user's row before it looks (a timesheet
 * write, a check-in), so the check holds under concurrency (docs/crew-time.md).
 */
export const crewTime = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const col of ['check_in_time', 'check_out_time'])
      await db.schema.alterTable('visits').addColumn(col, 'bigint').execute();
    for (const col of ['check_in_location', 'check_out_location'])
      await db.schema.alterTable('visits').addColumn(col, 'text').execute();

    await createItemTable(
      db,
      dialect,
      'timesheets',
      (t) =>
        withTimes(
          t
            .addColumn('user_id', 'integer', (c) => c.notNull())
            .addColumn('job_id', 'integer')
            .addColumn('visit_id', 'integer')
            .addColumn('kind', 'text', (c) => c.notNull().defaultTo('work'))
            .addColumn('start_time', 'bigint', (c) => c.notNull())
            .addColumn('end_time', 'bigint')
            .addColumn('duration', 'integer')
            .addColumn('notes', 'text'),
        ).addColumn('deleted', 'integer', flag),
      {
        links: [
          { column: 'user_id', table: 'users', onDelete: 'cascade' },
          { column: 'job_id', table: 'jobs', onDelete: 'set null' },
          { column: 'visit_id', table: 'visits', onDelete: 'set null' },
        ],
        counted: true,
      },
    );
    // The overlap check and payroll's reading: one user's entries by time.
    await sql`create index timesheets_user_start on timesheets (account_id, user_id, start_time)`.execute(db);

    await createItemTable(
      db,
      dialect,
      'locations',
      // `modified` is never changed (PATCH is 405): the write pipeline sets it with `created`; not in the API.
      (t) =>
        withTimes(
          t
            .addColumn('user_id', 'integer', (c) => c.notNull())
            .addColumn('lat', 'double precision', (c) => c.notNull())
            .addColumn('lng', 'double precision', (c) => c.notNull())
            .addColumn('accuracy', 'double precision')
            .addColumn('recorded_at', 'bigint', (c) => c.notNull()),
        ),
      { links: [{ column: 'user_id', table: 'users', onDelete: 'cascade' }] },
    );
    // The retention sweep reads the oldest pings of every account.
    await sql`create index locations_recorded_at on locations (recorded_at)`.execute(db);

    await createItemTable(
      db,
      dialect,
      'unavailabilities',
      (t) =>
        withTimes(
          t
            .addColumn('user_id', 'integer', (c) => c.notNull())
            .addColumn('start_time', 'bigint', (c) => c.notNull())
            .addColumn('end_time', 'bigint', (c) => c.notNull())
            .addColumn('reason', 'text', (c) => c.notNull().defaultTo('other'))
            .addColumn('notes', 'text'),
        ).addColumn('deleted', 'integer', flag),
      { links: [{ column: 'user_id', table: 'users', onDelete: 'cascade' }], counted: true },
    );
  },
});
