import type { RoleKind } from '../../auth/context.js';
import type { Updateable } from 'kysely';
import type { Executor } from '../../db/runner.js';
import type { AccountsTable } from '../../db/types.js';

/** The users collection's own queries (its rules ask these). */

/** The id of the account's seeded role of that kind. */
export async function roleOf(db: Executor, accountId: number, kind: RoleKind): Promise<number> {
  const row = await db
    .selectFrom('roles')
    .select('id')
    .where('account_id', '=', accountId)
    .where('kind', '=', kind)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Whether a user of the account who is not deleted has the role. */
export async function anyLiveWithRole(db: Executor, accountId: number, roleId: number): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accountId)
    .where('role_id', '=', roleId)
    .where('deleted', '=', 0)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the account has the user, not deleted. */
export async function isLiveUser(db: Executor, accountId: number, id: number): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('deleted')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.deleted === 0;
}

/** The hash of the user's calendar feed token, or null: no feed. */
export async function setCalendarHash(db: Executor, accountId: number, id: number, hash: string | null): Promise<void> {
  await db
    .updateTable('users')
    .set({ calendar_token_hash: hash })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** The live user whose calendar feed token has this hash. */
export function userByCalendarHash(db: Executor, accountId: number, hash: string) {
  return db
    .selectFrom('users')
    .select(['id', 'calendar_token_hash', 'first_name', 'last_name'])
    .where('account_id', '=', accountId)
    .where('calendar_token_hash', '=', hash)
    .where('deleted', '=', 0)
    .executeTakeFirst();
}

/** The user's visits (not deleted) overlapping [from, to), with their jobs and clients, by start. */
export function calendarVisits(db: Executor, accountId: number, userId: number, from: number, to: number) {
  return db
    .selectFrom('visits as v')
    .innerJoin('jobs as j', (j) => j.onRef('j.account_id', '=', 'v.account_id').onRef('j.id', '=', 'v.job_id'))
    .leftJoin('clients as c', (j) => j.onRef('c.account_id', '=', 'j.account_id').onRef('c.id', '=', 'j.client_id'))
    .select([
      'v.id',
      'v.label',
      'v.notes',
      'j.reference',
      'c.name as client_name',
      'c.phone as client_phone',
      'c.mobile as client_mobile',
      'v.start_time',
      'v.end_time',
      'v.state',
      'v.modified',
      'j.title',
      'j.address_line1',
      'j.address_line2',
      'j.address_city',
      'j.address_region',
      'j.address_postcode',
      'j.address_country',
    ])
    .where('v.account_id', '=', accountId)
    .where('v.user_id', '=', userId)
    .where('v.deleted', '=', 0)
    .where('v.end_time', '>', from)
    .where('v.start_time', '<', to)
    .orderBy('v.start_time')
    .orderBy('v.id')
    .execute();
}

/** The account's new business details (`POST /users/account`, src/collections/users/account.ts). */
export async function setAccountColumns(
  db: Executor,
  accountId: number,
  set: Updateable<AccountsTable>,
  now: number,
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ ...set, modified: now })
    .where('id', '=', accountId)
    .execute();
}
