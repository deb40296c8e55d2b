import type { Executor } from '../../db/runner.js';

/** The deliveries collection's own queries. */

/** A delivery due again now, whatever its state: whether the account has it. */
export async function queueAgain(db: Executor, accountId: number, id: number, now: number): Promise<boolean> {
  const done = await db
    .updateTable('deliveries')
    .set({ state: 'pending', next_attempt_at: now, lease_until: null, lease_owner: null, modified: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}
