import type { Migration } from 'kysely';
import type { AnyDb } from './columns.js';

/**
 * A user's workgroups read by the user (`GET /users`' `workgroups`): the index by user now holds
 * the workgroup too, so it covers that read. With only (account, user), SQLite without statistics
 * preferred the primary key's (account, workgroup, user) and read every membership of the account
 * for each page (src/collections/machinery/links.ts, loadLists).
 */
export const memberIndex = (): Migration => ({
  async up(db: AnyDb) {
    await db.schema.dropIndex('workgroup_members_user').execute();
    await db.schema
      .createIndex('workgroup_members_user')
      .on('workgroup_members')
      .columns(['account_id', 'user_id', 'workgroup_id'])
      .execute();
  },
});
