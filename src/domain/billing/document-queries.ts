import type { Selectable } from 'kysely';
import { dialectOf, type Executor } from '../../db/runner.js';
import type { DB } from '../../db/types.js';
import { CHARGE_LINE_COLUMNS } from '../../collections/machinery/lines.js';

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

/** The address columns of a client, job or site, as the lines a page prints (empty ones left out). */
const ADDRESS_COLUMNS = [
  'address_line1',
  'address_line2',
  'address_city',
  'address_region',
  'address_postcode',
  'address_country',
] as const;
type AddressRow = { [K in (typeof ADDRESS_COLUMNS)[number]]: string | null };
type Address = {
  line1?: string | null;
  line2?: string | null;
  city?: string | null;
  region?: string | null;
  postcode?: string | null;
  country?: string | null;
};

/** An address as printed lines: line 1, line 2, "city region postcode", country. */
export function addressLines(a: Address | null | undefined): string[] {
  if (!a) return [];
  return [a.line1, a.line2, [a.city, a.region, a.postcode].filter(Boolean).join(' '), a.country].filter(
    (x): x is string => !!x,
  );
}
const fromColumns = (r: AddressRow | undefined): Address | undefined =>
  r && {
    line1: r.address_line1,
    line2: r.address_line2,
    city: r.address_city,
    region: r.address_region,
    postcode: r.address_postcode,
    country: r.address_country,
  };

/** Countries on Letter paper (ISO 3166 codes or names as an address may write them). */
const LETTER = /^(us|usa|u\.s\.a?\.?|united states( of america)?|ca|can|canada)$/i;

/** The account's `paperSize`, or the one of its address country when none was set (US, Canada: Letter). */
export function paperOf(paperSize: string | null, country: string | null | undefined): 'A4' | 'Letter' {
  if (paperSize === 'A4' || paperSize === 'Letter') return paperSize;
  return country && LETTER.test(country.trim()) ? 'Letter' : 'A4';
}

/** What a document shows of the business (the account's members), its client and its job. */
export async function parties(db: Executor, accountId: number, clientId: number | null, jobId: number | null) {
  const account = await db
    .selectFrom('accounts')
    .select([
      'company_name',
      'currency',
      'time_zone',
      'address',
      'phone',
      'email',
      'tax_number',
      'logo',
      'payment_terms',
      'bank_details',
      'paper_size',
    ])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  const client =
    clientId === null
      ? undefined
      : await db
          .selectFrom('clients')
          .select(['name', 'company_name', 'email', ...ADDRESS_COLUMNS])
          .where('account_id', '=', accountId)
          .where('id', '=', clientId)
          .executeTakeFirst();
  const job =
    jobId === null
      ? undefined
      : await db
          .selectFrom('jobs')
          .select(['reference', 'title', 'order_number', 'site_id', ...ADDRESS_COLUMNS])
          .where('account_id', '=', accountId)
          .where('id', '=', jobId)
          .executeTakeFirst();
  // The service address: the job's own, else its site's.
  let service = addressLines(fromColumns(job));
  if (job && !service.length && job.site_id !== null) {
    const site = await db
      .selectFrom('sites')
      .select(ADDRESS_COLUMNS)
      .where('account_id', '=', accountId)
      .where('id', '=', job.site_id)
      .executeTakeFirst();
    service = addressLines(fromColumns(site));
  }
  const address = account.address ? (JSON.parse(account.address) as Address) : null;
  const logoId = account.logo ? (JSON.parse(account.logo) as { id: number }).id : null;
  const logo =
    logoId === null
      ? undefined
      : await db
          .selectFrom('files')
          .select(['sha256'])
          .where('account_id', '=', accountId)
          .where('id', '=', logoId)
          .where('deleted', '=', 0)
          .executeTakeFirst();
  return {
    seller: {
      company: account.company_name,
      address: addressLines(address),
      phone: account.phone,
      email: account.email,
      taxNumber: account.tax_number,
      /** The stored bytes' key of the logo, when the account has one that is not deleted. */
      logo: logo?.sha256 ?? null,
    },
    client: {
      name: client?.name ?? '',
      company: client?.company_name ?? null,
      email: client?.email ?? null,
      address: addressLines(fromColumns(client)),
    },
    job: job
      ? { reference: job.reference, title: job.title, orderNumber: job.order_number, serviceAddress: service }
      : null,
    paymentTerms: account.payment_terms,
    bankDetails: account.bank_details,
    paperSize: paperOf(account.paper_size, address?.country),
    timeZone: account.time_zone,
  };
}

/** The names of tax rates by id (a line keeps the rate's id and percent; the page prints its name too). */
export async function taxRateNames(db: Executor, accountId: number, ids: number[]): Promise<Map<number, string>> {
  if (!ids.length) return new Map();
  const rows = await db
    .selectFrom('tax_rates')
    .select(['id', 'name'])
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** An invoice's payments, oldest first: what its page lists. */
export function invoicePayments(db: Executor, accountId: number, invoiceId: number) {
  return db
    .selectFrom('payments')
    .select(['amount', 'method', 'paid_at', 'reference'])
    .where('account_id', '=', accountId)
    .where('invoice_id', '=', invoiceId)
    .orderBy('paid_at')
    .orderBy('id')
    .execute();
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
