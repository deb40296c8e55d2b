import type { Selectable } from 'kysely';
import { dialectOf, type Executor } from '../../db/runner.js';
import type { DB } from '../../db/types.js';
import { CHARGE_LINE_COLUMNS } from './lines.js';

/** What quotes and invoices (documents made from a job, for a client) both ask of the database. */

/** A job's charges (not deleted) in id order, with what a line copies of them: a document narrows it. */
export function jobCharges(db: Executor, accountId: number, jobId: number) {
  return db
    .selectFrom('charges')
    .select(CHARGE_LINE_COLUMNS)
    .where('account_id', '=', accountId)
    .where('job_id', '=', jobId)
    .where('deleted', '=', 0)
    .orderBy('id');
}

/** A job's client: a document's default client. */
export async function jobClient(db: Executor, accountId: number, jobId: number): Promise<number | null | undefined> {
  const row = await db
    .selectFrom('jobs')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('id', '=', jobId)
    .executeTakeFirst();
  return row?.client_id;
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

/**
 * The job a document is built from, locked against its deletion until the commit (PostgreSQL: `FOR
 * KEY SHARE`, which edits of the job do not wait for): taken before its charges, in the order a
 * job's deletion takes them (the job, then the rows that reference it), so the two never deadlock.
 * False when the job is gone (deleted meanwhile).
 */
export async function lockJob(db: Executor, accountId: number, jobId: number): Promise<boolean> {
  const rows = await db
    .selectFrom('jobs')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '=', jobId)
    .modifyEnd(dialectOf(db).lockClause('key share'))
    .execute();
  return rows.length > 0;
}

/**
 * A quote's or an invoice's row, locked until the commit (their actions; a quote an invoice is made
 * from). Kysely checks the query against both tables; the row is typed back as the one asked for.
 */
export function lockDocument<T extends 'quotes' | 'invoices'>(db: Executor, table: T, accountId: number, id: number) {
  return db
    .selectFrom(table as 'quotes' | 'invoices')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(db).lockClause('update'))
    .$castTo<Selectable<DB[T]>>()
    .executeTakeFirst();
}
