import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withId, withTimes, type AnyDb } from './columns.js';

const SEEDS_AT_002 = [
  ['New', '#3B82F6', 'new'],
  ['In progress', '#F59E0B', 'inProgress'],
  ['On hold', '#6B7280', 'onHold'],
  ['Completed', '#10B981', 'completed'],
] as const;

/** The address members clients and jobs share, as columns. */
const ADDRESS = ['line1', 'line2', 'city', 'region', 'postcode', 'country'].map((m) => `address_${m}`);

/** statuses, clients, jobs, visits and the per-account counters behind job references. */
export const fieldService = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    // One row per (account, sequence); bumped by an upsert inside the write transaction, which
    // row-locks on PostgreSQL and runs under SQLite's write lock, so concurrent creates never share a number.
    await db.schema
      .createTable('counters')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('value', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('counters_pk', ['account_id', 'name'])
      .execute();

    await withTimes(
      withId(db.schema.createTable('statuses'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('colour', 'text')
        .addColumn('status_group', 'text', (c) => c.notNull().defaultTo('new'))
        .addColumn('is_default', 'integer', flag)
        .addColumn('deleted', 'integer', flag),
    ).execute();
    await db.schema
      .createIndex('statuses_account_label')
      .unique()
      .on('statuses')
      .columns(['account_id', 'label'])
      .execute();
    // At most one default per account even if two transactions race to change it.
    await db.schema
      .createIndex('statuses_account_default')
      .unique()
      .on('statuses')
      .column('account_id')
      .where(sql.ref('is_default'), '=', sql.lit(1))
      .execute();

    let clients = withId(db.schema.createTable('clients'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('company_name', 'text')
      .addColumn('email', 'text')
      .addColumn('phone', 'text')
      .addColumn('mobile', 'text');
    for (const col of ADDRESS) clients = clients.addColumn(col, 'text');
    await withTimes(clients.addColumn('notes', 'text').addColumn('deleted', 'integer', flag)).execute();
    await db.schema.createIndex('clients_account_id').on('clients').columns(['account_id', 'id']).execute();

    let jobs = withId(db.schema.createTable('jobs'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('reference', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('client_id', 'integer', (c) => c.references('clients.id').onDelete('set null'))
      // No ON DELETE action: a status still used by a job cannot be deleted (the machinery reports 1051).
      .addColumn('status_id', 'integer', (c) => c.notNull().references('statuses.id'))
      .addColumn('priority', 'text', (c) => c.notNull().defaultTo('normal'))
      .addColumn('order_number', 'text');
    for (const col of ADDRESS) jobs = jobs.addColumn(col, 'text');
    await withTimes(
      jobs
        .addColumn('due_date', 'text')
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('deleted', 'integer', flag),
    ).execute();
    await db.schema.createIndex('jobs_account_id').on('jobs').columns(['account_id', 'id']).execute();
    await db.schema
      .createIndex('jobs_account_reference')
      .unique()
      .on('jobs')
      .columns(['account_id', 'reference'])
      .execute();
    // Foreign-key columns are indexed so deletes of the referenced rows do not scan jobs.
    for (const col of ['status_id', 'client_id', 'created_by']) {
      await db.schema.createIndex(`jobs_${col}`).on('jobs').column(col).execute();
    }

    await withTimes(
      withId(db.schema.createTable('visits'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('job_id', 'integer', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('notes', 'text')
        .addColumn('start_time', 'bigint', (c) => c.notNull())
        .addColumn('end_time', 'bigint', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().defaultTo('scheduled'))
        .addColumn('deleted', 'integer', flag),
    ).execute();
    await db.schema.createIndex('visits_account_id').on('visits').columns(['account_id', 'id']).execute();
    // (job, user) serves the contractor's "jobs assigned to me" check; user alone serves user deletion.
    await db.schema.createIndex('visits_job_user').on('visits').columns(['job_id', 'user_id']).execute();
    await db.schema.createIndex('visits_user').on('visits').column('user_id').execute();

    // Accounts made before this migration get the statuses every account started with then. A
    // frozen copy: this migration must do tomorrow what it did the day it was written.
    const now = Date.now();
    const accounts = await db.selectFrom('accounts').select('id').execute();
    for (const a of accounts) {
      await db
        .insertInto('statuses')
        .values(
          SEEDS_AT_002.map(([label, colour, group], i) => ({
            account_id: a.id,
            label,
            colour,
            status_group: group,
            is_default: i === 0 ? 1 : 0,
            deleted: 0,
            created: now,
            modified: now,
          })),
        )
        .execute();
    }
  },
});
