import type { RoleKind } from '../../auth/context.js';
import type { Executor } from '../../db/runner.js';

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
