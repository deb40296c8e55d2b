import type { Executor } from '../../db/tx.js';

/** The product a charge copies its defaults from (its reference was checked by the pipeline). */
export function productOf(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('products')
    .select(['kind', 'name', 'description', 'unit_price', 'unit_cost', 'tax_rate_id'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A tax rate's percent, in 10^-4 (null when it is gone). */
export async function taxPercentOf(db: Executor, accountId: number, id: number): Promise<number | null> {
  const row = await db
    .selectFrom('tax_rates')
    .select('percent')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? Number(row.percent) : null;
}

/** The job of a visit of the account. */
export async function visitJobOf(db: Executor, accountId: number, id: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('visits')
    .select('job_id')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.job_id;
}
