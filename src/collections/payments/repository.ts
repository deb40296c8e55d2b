import { sql } from 'kysely';
import { dialectOf, type Executor } from '../../db/runner.js';

/** The invoice a payment is for, locked until the commit. */
export function lockInvoiceOf(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('invoices')
    .select(['id', 'state', 'balance'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .executeTakeFirst();
}

/** `amount` paid on the invoice (negative: a payment deleted): paid at a zero balance, issued again above it. */
export async function applyPayment(db: Executor, accountId: number, id: number, amount: number, now: number) {
  await db
    .updateTable('invoices')
    .set({
      amount_paid: sql`amount_paid + ${amount}`,
      balance: sql`balance - ${amount}`,
      state: sql`case when balance - ${amount} = 0 then 'paid' else 'issued' end`,
      modified: now,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}
