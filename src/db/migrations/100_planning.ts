import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable, createLinkTable } from './scheme.js';

/**
 * Planning the work (PRODUCT §15), the model: the account's `skills`; a user's working hours (JSON
 * text of `{day, start, end}`), home location (JSON text `{lat, lng}`: planning reads it whole, nothing filters by it) and skills; a job's
 * required skills; a visit's promised arrival window (epoch ms) and `locked`. Skill lists are link
 * tables; adding or removing a link bumps the version of the item that presents the list (the
 * user, the job), as 011 does for workgroup members.
 */
export const planning = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await createItemTable(
      db,
      dialect,
      'skills',
      (t) => withTimes(t.addColumn('name', 'text', (c) => c.notNull()).addColumn('deleted', 'integer', flag)),
      { counted: true },
    );
    await sql`create unique index skills_account_name on skills (account_id, name)`.execute(db);

    await db.schema
      .alterTable('users')
      .addColumn('working_hours', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema.alterTable('users').addColumn('home_location', 'text').execute();

    for (const [table, owner, column] of [
      ['user_skills', 'users', 'user_id'],
      ['job_skills', 'jobs', 'job_id'],
    ] as const) {
      await createLinkTable(db, dialect, table, { column, table: owner }, { column: 'skill_id', table: 'skills' });
      if (dialect === 'postgres') {
        await sql
          .raw(
            `create function fsm_${table}_version() returns trigger language plpgsql as $$
            declare r record;
            begin
              if tg_op = 'DELETE' then r := old; else r := new; end if;
              update ${owner} set version = version + 1 where account_id = r.account_id and id = r.${column};
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
                update ${owner} set version = version + 1 where account_id = ${row}.account_id and id = ${row}.${column};
              end`,
            )
            .execute(db);
      }
    }

    for (const col of ['arrival_window_start', 'arrival_window_end'])
      await db.schema.alterTable('visits').addColumn(col, 'bigint').execute();
    await db.schema.alterTable('visits').addColumn('locked', 'integer', flag).execute();
  },
});
