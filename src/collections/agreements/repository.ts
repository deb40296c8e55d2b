import { dialectOf, type Executor } from '../../db/runner.js';

/** The agreements collection's own queries. */

/** The agreement's row, locked until the commit (FOR UPDATE on PostgreSQL), or undefined. */
export async function lockAgreement(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('agreements')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .executeTakeFirst();
}

export async function setState(db: Executor, accountId: number, id: number, state: string, now: number) {
  await db
    .updateTable('agreements')
    .set({ state, modified: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** The client of a site of the account, or undefined. */
export async function clientOfSite(db: Executor, accountId: number, siteId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('sites')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('id', '=', siteId)
    .executeTakeFirst();
  return row?.client_id;
}

/** The site of each of these assets of the account, by asset id. */
export async function sitesOfAssets(db: Executor, accountId: number, ids: number[]): Promise<Map<number, number>> {
  if (!ids.length) return new Map();
  const rows = await db
    .selectFrom('assets')
    .select(['id', 'site_id'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.site_id]));
}

/** The asset ids an agreement lists. */
export async function assetsOfAgreement(db: Executor, accountId: number, id: number): Promise<number[]> {
  const rows = await db
    .selectFrom('agreement_assets')
    .select('asset_id')
    .where('account_id', '=', accountId)
    .where('agreement_id', '=', id)
    .execute();
  return rows.map((r) => r.asset_id);
}
