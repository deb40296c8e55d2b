import type { Executor } from '../../db/runner.js';

/** The sites collection's own queries (its rules ask these). */

/** Whether a job of the site is for another client than `clientId` (moving the site would break it). */
export async function siteHasJobOfOtherClient(
  db: Executor,
  accountId: number,
  siteId: number,
  clientId: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('jobs')
    .select('id')
    .where('account_id', '=', accountId)
    .where('site_id', '=', siteId)
    .where((eb) => eb.or([eb('client_id', 'is', null), eb('client_id', '<>', clientId)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
