import { sql } from 'kysely';
import { dialectOf, type Executor } from '../../db/runner.js';

/** The quotes collection's own queries. */

/** A job's client (a quote's default client). */
export async function jobClient(db: Executor, accountId: number, jobId: number): Promise<number | null | undefined> {
  const row = await db
    .selectFrom('jobs')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('id', '=', jobId)
    .executeTakeFirst();
  return row?.client_id;
}

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

/** The account's next `Q-000001`, drawn in the creating transaction (as invoices' numbers). */
export async function nextQuoteNumber(db: Executor, accountId: number): Promise<string> {
  const { value } = await db
    .insertInto('counters')
    .values({ account_id: accountId, name: 'quotes', value: 1 })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ value: sql`counters.value + 1` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  return `Q-${String(value).padStart(6, '0')}`;
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

/** What a document shows of its company and client. */
export async function parties(db: Executor, accountId: number, clientId: number) {
  const account = await db
    .selectFrom('accounts')
    .select('company_name')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  const c = await db
    .selectFrom('clients')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', clientId)
    .executeTakeFirst();
  const address = c
    ? [
        c.address_line1,
        c.address_line2,
        [c.address_city, c.address_region, c.address_postcode].filter(Boolean).join(' '),
        c.address_country,
      ].filter((x): x is string => !!x)
    : [];
  return { company: account.company_name, client: { name: c?.name ?? '', address } };
}
