import { nextCount, numbered } from '../../db/counters.js';
import { dialectOf, untyped, type Executor } from '../../db/runner.js';

/** The jobs collection's own queries (its rules ask these). */

/**
 * The next free `J-000123` of the account. The counter is bumped by an upsert inside the write
 * transaction: PostgreSQL row-locks it and SQLite holds its write lock, so concurrent creates
 * never draw the same number. Numbers a client already used by hand are skipped.
 */
export async function nextReference(db: Executor, accountId: number): Promise<string> {
  for (;;) {
    const reference = numbered('J', await nextCount(db, accountId, 'jobs'));
    const taken = await db
      .selectFrom('jobs')
      .select('id')
      .where('account_id', '=', accountId)
      .where('reference', '=', reference)
      .executeTakeFirst();
    if (!taken) return reference;
  }
}

/** The account's default status: the one new jobs get (PRODUCT §4). */
export async function defaultStatus(db: Executor, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('statuses')
    .select('id')
    .where('account_id', '=', accountId)
    .where('is_default', '=', 1)
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The client of a site of the account (undefined when there is no such site), the site's row held
 * (FOR SHARE on PostgreSQL) until the commit: a concurrent move of the site to another client waits
 * for this job, and then sees it (sites/index.ts), so a job never keeps a site of another client.
 */
export async function clientOfSite(db: Executor, accountId: number, siteId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('sites')
    .select('client_id')
    .where('account_id', '=', accountId)
    .where('id', '=', siteId)
    .modifyEnd(dialectOf(db).lockClause('share'))
    .executeTakeFirst();
  return row?.client_id;
}

/** The stored address columns of a site or client, or undefined when it has no address at all. */
export async function addressOf(
  db: Executor,
  table: 'sites' | 'clients',
  accountId: number,
  id: number,
  columns: string[],
): Promise<Record<string, unknown> | undefined> {
  const row = (await untyped(db)
    .selectFrom(table)
    .select(columns)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst()) as Record<string, unknown> | undefined;
  return row && columns.some((c) => row[c] !== null) ? row : undefined;
}

/**
 * What keeps a job from being deleted (PRODUCT §9, docs/money.md): its quotes (numbered at
 * creation), its invoices (numbered at issue; a draft's lines point at the job's charges), and any
 * charge of it billed by an invoice of another job. Each as the client would name it.
 */
export async function documentsOfJob(db: Executor, accountId: number, jobId: number): Promise<string[]> {
  const [quotes, invoices, billed] = await Promise.all([
    db
      .selectFrom('quotes')
      .select(['number'])
      .where('account_id', '=', accountId)
      .where('job_id', '=', jobId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('invoices')
      .select(['id', 'number', 'state'])
      .where('account_id', '=', accountId)
      .where('job_id', '=', jobId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('charges')
      .innerJoin('invoices', (j) =>
        j.onRef('invoices.id', '=', 'charges.invoice_id').onRef('invoices.account_id', '=', 'charges.account_id'),
      )
      .select(['invoices.id', 'invoices.number'])
      .where('charges.account_id', '=', accountId)
      .where('charges.job_id', '=', jobId)
      .where((eb) => eb.or([eb('invoices.job_id', 'is', null), eb('invoices.job_id', '!=', jobId)]))
      .distinct()
      .execute(),
  ]);
  const invoice = (i: { id: number; number: string | null }) => i.number ?? `draft invoice ${i.id}`;
  return [...quotes.map((q) => q.number), ...invoices.map(invoice), ...billed.map(invoice)];
}
