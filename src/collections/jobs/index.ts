import { sql } from 'kysely';
import { ApiError } from '../../errors.js';
import type { Executor } from '../../db/tx.js';
import { defineCollection } from '../machinery/collection.js';
import { seesJob } from '../policy.js';
import { jobFields } from './schema.js';

/**
 * The next free `J-000123` of the account. The counter is bumped by an upsert inside the write
 * transaction: PostgreSQL row-locks it and SQLite holds its write lock, so concurrent creates
 * never draw the same number. Numbers a client already used by hand are skipped.
 */
async function nextReference(db: Executor, accountId: number): Promise<string> {
  for (;;) {
    const { value } = await db
      .insertInto('counters')
      .values({ account_id: accountId, name: 'jobs', value: 1 })
      .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: sql`counters.value + 1` }))
      .returning('value')
      .executeTakeFirstOrThrow();
    const reference = `J-${String(value).padStart(6, '0')}`;
    const taken = await db
      .selectFrom('jobs')
      .select('id')
      .where('account_id', '=', accountId)
      .where('reference', '=', reference)
      .executeTakeFirst();
    if (!taken) return reference;
  }
}

export const jobs = defineCollection({
  name: 'jobs',
  table: 'jobs',
  description: 'Work to be done, usually for a client; scheduled through visits.',
  fields: jobFields,
  counted: true,
  example: (ref) => ({
    title: 'Boiler service',
    client: ref('clients'),
    status: ref('statuses'),
    priority: 'high',
    dueDate: '2030-05-01',
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    // A job is a contractor's when one of its visits is assigned to them. No `ownsNew`: they cannot create jobs.
    own: (caller, eb, table) => seesJob(caller, eb, `${table}.id`),
  },
  rules: {
    // Deleting a job deletes every visit on it, other people's too: not a contractor's call.
    authorize({ caller, op }) {
      if (op === 'delete' && caller.role === 'contractor')
        throw new ApiError('roleForbids', 'contractors cannot delete jobs');
    },
    async fill({ caller, db, op, row, once }) {
      if (op !== 'create') return;
      row.created_by = caller.userId;
      if (row.status_id === undefined) {
        row.status_id = await once(
          'defaultStatus',
          async () =>
            (
              await db
                .selectFrom('statuses')
                .select('id')
                .where('account_id', '=', caller.accountId)
                .where('is_default', '=', 1)
                .executeTakeFirstOrThrow()
            ).id,
        );
      }
      if (row.reference === undefined) row.reference = await nextReference(db, caller.accountId);
    },
  },
});
