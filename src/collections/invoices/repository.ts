import { dialectOf, type Executor } from '../../db/runner.js';
import { jobCharges } from '../../domain/billing/document-queries.js';

/** The invoices collection's own queries (its rules and actions ask these). */

/**
 * The job's charges an invoice made from it bills: billable, `actual`, not deleted, billed by no
 * invoice (a void one releases them), in id order; locked until the commit so two invoices made at
 * once from one job never bill the same charge (PostgreSQL re-reads a row it waited for and skips
 * it once billed; SQLite's writers are serial).
 */
export function unbilledCharges(db: Executor, accountId: number, jobId: number) {
  return jobCharges(db, accountId, jobId)
    .where('stage', '=', 'actual')
    .where('billable', '=', 1)
    .where('invoice_id', 'is', null)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .execute();
}

/** The charges an invoice bills. */
export async function billedBy(db: Executor, accountId: number, invoiceId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('charges')
    .select('id')
    .where('account_id', '=', accountId)
    .where('invoice_id', '=', invoiceId)
    .execute();
  return rows.map((r) => r.id);
}

/** Sets (or with null, clears) the invoice of charges. */
export async function setInvoice(
  db: Executor,
  accountId: number,
  ids: number[],
  invoiceId: number | null,
  now: number,
) {
  if (!ids.length) return;
  await db
    .updateTable('charges')
    .set({ invoice_id: invoiceId, modified: now })
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
}

/** Payments made on an invoice. */
export async function paymentCount(db: Executor, accountId: number, invoiceId: number): Promise<number> {
  const row = await db
    .selectFrom('payments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('invoice_id', '=', invoiceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Whether an invoice that is not void was made from the quote. */
export async function invoicedFrom(db: Executor, accountId: number, quoteId: number): Promise<boolean> {
  const row = await db
    .selectFrom('invoices')
    .select('id')
    .where('account_id', '=', accountId)
    .where('quote_id', '=', quoteId)
    .where('state', '!=', 'void')
    .executeTakeFirst();
  return row !== undefined;
}
