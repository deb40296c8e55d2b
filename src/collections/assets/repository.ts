import type { Executor } from '../../db/runner.js';

/** The assets collection's own queries. */

/**
 * The latest check-out (epoch ms) of a visit of a job that lists each asset (PRODUCT §16), by
 * asset id: only the assets with one. Visits and jobs of the account only.
 */
export async function lastCheckOuts(db: Executor, accountId: number, assetIds: number[]): Promise<Map<number, number>> {
  if (!assetIds.length) return new Map();
  const rows = await db
    .selectFrom('job_assets as l')
    .innerJoin('visits as v', (j) => j.onRef('v.account_id', '=', 'l.account_id').onRef('v.job_id', '=', 'l.job_id'))
    .select((eb) => ['l.asset_id', eb.fn.max('v.check_out_time').as('last')])
    .where('l.account_id', '=', accountId)
    .where('l.asset_id', 'in', assetIds)
    .where('v.check_out_time', 'is not', null)
    .groupBy('l.asset_id')
    .execute();
  return new Map(rows.filter((r) => r.last !== null).map((r) => [Number(r.asset_id), Number(r.last)]));
}

/** The client of a site of the account, or undefined when there is no such site. */
export async function clientOfSite(db: Executor, accountId: number, siteId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('sites')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('id', '=', siteId)
    .executeTakeFirst();
  return row?.client_id;
}
