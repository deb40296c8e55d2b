import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable, createLinkTable } from './scheme.js';

/**
 * Forms (PRODUCT §17): the account's `form_templates` (their `fields` as JSON text, and
 * `template_version`, which a write that changes the fields moves), a job's templates
 * (`job_form_templates`, bumping the job's version like 100's skill lists), `form_submissions`
 * (the answers as JSON text, `submitted` kept as the ISO text it is shown and hashed as, the
 * `sha256` of §17) and `form_submission_files`, the files a submission names (a file listed
 * there is not deleted or changed: the files collection asks).
 */
export const forms = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await createItemTable(
      db,
      dialect,
      'form_templates',
      (t) =>
        withTimes(
          t
            .addColumn('name', 'text', (c) => c.notNull())
            .addColumn('fields', 'text', (c) => c.notNull().defaultTo('[]'))
            .addColumn('required_to_complete', 'integer', flag)
            .addColumn('template_version', 'integer', (c) => c.notNull().defaultTo(1))
            .addColumn('deleted', 'integer', flag),
        ),
      { counted: true },
    );

    await createLinkTable(
      db,
      dialect,
      'job_form_templates',
      { column: 'job_id', table: 'jobs' },
      { column: 'form_template_id', table: 'form_templates' },
    );
    if (dialect === 'postgres') {
      await sql`create function fsm_job_form_templates_version() returns trigger language plpgsql as $$
        declare r record;
        begin
          if tg_op = 'DELETE' then r := old; else r := new; end if;
          update jobs set version = version + 1 where account_id = r.account_id and id = r.job_id;
          return null;
        end $$`.execute(db);
      await sql`create trigger job_form_templates_version after insert or delete on job_form_templates
        for each row execute function fsm_job_form_templates_version()`.execute(db);
    } else {
      for (const [event, row] of [
        ['insert', 'new'],
        ['delete', 'old'],
      ])
        await sql
          .raw(
            `create trigger job_form_templates_version_${event} after ${event} on job_form_templates begin
              update jobs set version = version + 1 where account_id = ${row}.account_id and id = ${row}.job_id;
            end`,
          )
          .execute(db);
    }

    await createItemTable(
      db,
      dialect,
      'form_submissions',
      (t) =>
        withTimes(
          t
            .addColumn('template_id', 'integer', (c) => c.notNull())
            .addColumn('job_id', 'integer', (c) => c.notNull())
            .addColumn('visit_id', 'integer')
            .addColumn('answers', 'text', (c) => c.notNull().defaultTo('{}'))
            .addColumn('location', 'text')
            .addColumn('supersedes_id', 'integer')
            .addColumn('template_version', 'integer', (c) => c.notNull())
            .addColumn('submitted_by', 'integer')
            .addColumn('submitted', 'text', (c) => c.notNull())
            .addColumn('sha256', 'text', (c) => c.notNull()),
        ),
      {
        counted: true,
        links: [
          { column: 'template_id', table: 'form_templates', onDelete: 'restrict' },
          { column: 'job_id', table: 'jobs', onDelete: 'cascade' },
          { column: 'visit_id', table: 'visits', onDelete: 'set null' },
          { column: 'supersedes_id', table: 'form_submissions', onDelete: 'set null' },
          { column: 'submitted_by', table: 'users', onDelete: 'set null' },
        ],
      },
    );
    await sql`create index form_submissions_job_template on form_submissions (account_id, job_id, template_id)`.execute(
      db,
    );

    await createLinkTable(
      db,
      dialect,
      'form_submission_files',
      { column: 'submission_id', table: 'form_submissions' },
      { column: 'file_id', table: 'files' },
    );
  },
});
