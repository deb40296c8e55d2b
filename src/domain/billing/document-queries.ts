import type { InferResult, Selectable } from 'kysely';
import { dialectOf, query, slot, type Executor } from '../../db/runner.js';
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
  // One statement: the account, with its client and its job joined in it (the same account: the
  // join is tenant-scoped; an absent one, or none asked, joins no row).
  // Built once (a share page asks it on every opening: building it cost more than running it).
  const build = () =>
    db
      .selectFrom('accounts')
      .leftJoin('clients', (j) =>
        j.onRef('clients.account_id', '=', 'accounts.id').on('clients.id', '=', slot<number>('client')),
      )
      .leftJoin('jobs', (j) => j.onRef('jobs.account_id', '=', 'accounts.id').on('jobs.id', '=', slot<number>('job')))
      .select([
        'accounts.company_name',
        'accounts.currency',
        'accounts.time_zone',
        'accounts.address',
        'accounts.phone',
        'accounts.email',
        'accounts.tax_number',
        'accounts.logo',
        'accounts.payment_terms',
        'accounts.bank_details',
        'accounts.paper_size',
        'clients.id as c_id',
        'clients.name as c_name',
        'clients.company_name as c_company_name',
        'clients.email as c_email',
        'clients.address_line1 as c_address_line1',
        'clients.address_line2 as c_address_line2',
        'clients.address_city as c_address_city',
        'clients.address_region as c_address_region',
        'clients.address_postcode as c_address_postcode',
        'clients.address_country as c_address_country',
        'jobs.id as j_id',
        'jobs.reference as j_reference',
        'jobs.title as j_title',
        'jobs.order_number as j_order_number',
        'jobs.site_id as j_site_id',
        'jobs.address_line1 as j_address_line1',
        'jobs.address_line2 as j_address_line2',
        'jobs.address_city as j_address_city',
        'jobs.address_region as j_address_region',
        'jobs.address_postcode as j_address_postcode',
        'jobs.address_country as j_address_country',
      ])
      .where('accounts.id', '=', slot<number>('account'));
  const [r] = await query<InferResult<ReturnType<typeof build>>[number]>(
    db,
    'document parties',
    build,
    { account: accountId, client: clientId ?? -1, job: jobId ?? -1 },
    { oneRow: true },
  );
  if (!r) throw new Error(`no account ${accountId}`);
  const account = r;
  const client =
    clientId === null || r.c_id === null
      ? undefined
      : {
          name: r.c_name!,
          company_name: r.c_company_name,
          email: r.c_email,
          address_line1: r.c_address_line1,
          address_line2: r.c_address_line2,
          address_city: r.c_address_city,
          address_region: r.c_address_region,
          address_postcode: r.c_address_postcode,
          address_country: r.c_address_country,
        };
  const job =
    jobId === null || r.j_id === null
      ? undefined
      : {
          reference: r.j_reference!,
          title: r.j_title!,
          order_number: r.j_order_number,
          site_id: r.j_site_id,
          address_line1: r.j_address_line1,
          address_line2: r.j_address_line2,
          address_city: r.j_address_city,
          address_region: r.j_address_region,
          address_postcode: r.j_address_postcode,
          address_country: r.j_address_country,
        };
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
  const logo = logoId === null ? undefined : await logoFile(db, accountId, logoId);
  return {
    seller: {
      company: account.company_name,
      address: addressLines(address),
      phone: account.phone,
      email: account.email,
      taxNumber: account.tax_number,
      /** The stored bytes' key of the logo, when the account has one that is not deleted. */
      logo: logo && !logo.deleted ? logo.sha256 : null,
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
  const rows = await query<{ id: number; name: string }>(
    db,
    `tax rate names|${ids.length}`,
    () =>
      db
        .selectFrom('tax_rates')
        .select(['id', 'name'])
        .where('account_id', '=', slot<number>('account'))
        .where(
          'id',
          'in',
          ids.map((_, i) => slot<number>(`${i}`)),
        ),
    { account: accountId, ...Object.fromEntries(ids.map((id, i) => [`${i}`, id])) },
  );
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
  return documentRow(db, table, accountId, id, true);
}

/** A quote or invoice as stored, for its PDF, its page or what is made from it; `lock`: until the commit. */
export function documentRow<T extends 'quotes' | 'invoices'>(
  db: Executor,
  table: T,
  accountId: number,
  id: number,
  lock = false,
) {
  return db
    .selectFrom(table as 'quotes' | 'invoices')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .$if(lock, (q) => q.modifyEnd(dialectOf(db).lockClause('update')))
    .$castTo<Selectable<DB[T]>>()
    .executeTakeFirst();
}

/** The `files` item an account's logo names: its stored bytes' key and whether it is deleted. */
export function logoFile(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('files')
    .select(['sha256', 'deleted'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}
