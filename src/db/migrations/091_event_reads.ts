import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';
import { counted } from './scheme.js';

/**
 * Reading `/events` without scanning the account's events:
 * - events are counted per account (`row_counts`, as every counted table): an Administrator's page
 *   of every event reads its count in one row, and its answer is remembered under the version;
 * - a Contractor's terms (src/collections/policy.ts `contractorSeesEvent`) each have an index of
 *   their own, partial so that only the events with that member pay for it: the visits assigned to
 *   them after and before the change, their own user's events, and the events of a job.
 */
export const eventReads = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await counted(db, dialect, 'events');
    for (const [name, columns, where] of [
      ['events_scope_user', 'account_id, scope_user_id, id', `collection = 'visits' and scope_user_id is not null`],
      [
        'events_scope_old_user',
        'account_id, scope_old_user_id, id',
        `collection = 'visits' and scope_old_user_id is not null`,
      ],
      ['events_scope_job', 'account_id, scope_job_id, id', 'scope_job_id is not null'],
      ['events_users', 'account_id, item_id, id', `collection = 'users'`],
    ])
      await sql.raw(`create index ${name} on events (${columns}) where ${where}`).execute(db);
  },
});
