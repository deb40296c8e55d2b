import { dialectOf, type Executor } from '../../db/runner.js';

/** The agreements collection's own queries. */

/** An agreement's new state (the daily roll ends it). */
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

/** The agreement's row locked for the roll, or undefined when missing or another process holds it (PostgreSQL: SKIP LOCKED). */
export async function lockForRoll(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('agreements')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update', { skipLocked: true }))
    .executeTakeFirst();
}

export async function setRolledOn(db: Executor, accountId: number, id: number, today: string) {
  await db
    .updateTable('agreements')
    .set({ rolled_on: today })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** Up to `limit` active agreements of the account whose occurrences were last made before `today`. */
export async function behind(db: Executor, accountId: number, today: string, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('agreements')
    .select('id')
    .where('account_id', '=', accountId)
    .where('state', '=', 'active')
    .where('deleted', '=', 0)
    .where((eb) => eb.or([eb('rolled_on', 'is', null), eb('rolled_on', '<', today)]))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** The accounts that have active agreements, with their zones. */
export async function accountsWithAgreements(db: Executor): Promise<{ id: number; time_zone: string }[]> {
  return db
    .selectFrom('accounts')
    .select(['id', 'time_zone'])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('agreements')
          .select('agreements.id')
          .whereRef('agreements.account_id', '=', 'accounts.id')
          .where('agreements.state', '=', 'active'),
      ),
    )
    .orderBy('id')
    .execute();
}
