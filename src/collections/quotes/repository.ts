import { dialectOf, type Executor } from '../../db/runner.js';

/** The quotes collection's own queries. */

/** The job's quoted charges (not deleted), in id order: a new quote's lines. */
export function quotedCharges(db: Executor, accountId: number, jobId: number) {
  return db
    .selectFrom('charges')
    .select([
      'id',
      'description',
      'quantity',
      'unit_price',
      'tax_rate_id',
      'product_id',
      'kind',
      'tax_percent',
      'subtotal',
      'tax',
      'total',
    ])
    .where('account_id', '=', accountId)
    .where('job_id', '=', jobId)
    .where('stage', '=', 'quoted')
    .where('deleted', '=', 0)
    .orderBy('id')
    .execute();
}

/** The quote row, locked until the commit (an action). */
export function lockQuote(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('quotes')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .executeTakeFirst();
}
