import { sql } from 'kysely';
import { dialectOf, type Executor } from '../../db/runner.js';

/** The invoices collection's own queries (its rules and actions ask these). */

/** A job's client (an invoice's default client). */
export async function jobClient(db: Executor, accountId: number, jobId: number): Promise<number | null | undefined> {
  const row = await db
    .selectFrom('jobs')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('id', '=', jobId)
    .executeTakeFirst();
  return row?.client_id;
}

/**
 * The job's charges an invoice made from it bills: billable, `actual`, not deleted, billed by no
 * invoice (a void one releases them), in id order; locked until the commit so two invoices made at
 * once from one job never bill the same charge (PostgreSQL re-reads a row it waited for and skips
 * it once billed; SQLite's writers are serial).
 */
export function unbilledCharges(db: Executor, accountId: number, jobId: number) {
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
    .where('stage', '=', 'actual')
    .where('billable', '=', 1)
    .where('deleted', '=', 0)
    .where('invoice_id', 'is', null)
    .orderBy('id')
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

/** The invoice row, locked until the commit (an issue, a void, a payment). */
export function lockInvoice(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .executeTakeFirst();
}

/**
 * The account's next invoice number, drawn inside the issuing transaction: the upsert row-locks the
 * account's `invoices` counter on PostgreSQL until the commit (SQLite holds its write lock), so
 * issues running at once take numbers one after another, and a transaction that rolls back gives
 * its number back: gapless.
 */
export async function nextInvoiceNumber(db: Executor, accountId: number): Promise<string> {
  const { value } = await db
    .insertInto('counters')
    .values({ account_id: accountId, name: 'invoices', value: 1 })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: sql`counters.value + 1` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  return `INV-${String(value).padStart(6, '0')}`;
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

/** What a document shows of its company and client. */
export async function parties(db: Executor, accountId: number, clientId: number | null) {
  const account = await db
    .selectFrom('accounts')
    .select(['company_name', 'currency'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  const client =
    clientId === null
      ? undefined
      : await db
          .selectFrom('clients')
          .select([
            'name',
            'address_line1',
            'address_line2',
            'address_city',
            'address_region',
            'address_postcode',
            'address_country',
          ])
          .where('account_id', '=', accountId)
          .where('id', '=', clientId)
          .executeTakeFirst();
  const address = client
    ? [
        client.address_line1,
        client.address_line2,
        [client.address_city, client.address_region, client.address_postcode].filter(Boolean).join(' '),
        client.address_country,
      ].filter((x): x is string => !!x)
    : [];
  return { company: account.company_name, client: { name: client?.name ?? '', address } };
}

/** The invoice as stored (no lock), for a document. */
export function invoiceRow(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Whether a client of the account exists (a reference the pipeline has not refused already). */
export async function clientExists(db: Executor, accountId: number, id: number): Promise<boolean> {
  const row = await db
    .selectFrom('clients')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

/** The quote an invoice is made from, locked until the commit. */
export function lockQuote(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('quotes')
    .select(['id', 'state', 'deleted', 'lines', 'subtotal', 'tax_total', 'total'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .executeTakeFirst();
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
