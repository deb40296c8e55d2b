import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { linesOfCharges, priceLines, type Line } from '../machinery/lines.js';
import { afterDraftErrors } from '../../domain/billing/state.js';
import { accountMoney } from '../machinery/money.js';
import { invoiceActionDocs, issue, pdf, voidInvoice } from './actions.js';
import { billedBy, invoicedFrom, setInvoice, unbilledCharges } from './repository.js';
import { jobClient, lockDocument, lockJob } from '../../domain/billing/document-queries.js';
import { invoiceFields } from './schema.js';
import { emailAction, shareLinkAction, unshareAction } from '../../domain/customers/share-links.js';

/** What check found for an item and fill/after act on: the charges it bills, those it releases. */
const billing = new WeakMap<object, { bill: number[]; release: number[] }>();

async function check(ctx: TxItemContext<'invoices'>): Promise<ApiErrorBody[]> {
  const { caller, db, op, item, row, existing, once } = ctx;
  const account = caller.accountId;
  if (op === 'delete')
    return existing!.state === 'draft' ? [] : [validationError('conflict', 'state', 'only a draft invoice is deleted')];
  // Sequential: the reference checks already passed, so each member refused here is said once.
  if (existing) {
    const refused = afterDraftErrors(item, existing.state, 'invoice');
    if (refused.length) return refused;
  }
  const jobId = row.job_id !== undefined ? row.job_id : (existing?.job_id ?? null);
  if (op === 'create' && item.client === undefined) {
    const client = jobId === null ? null : await jobClient(db, account, jobId);
    if (client === null || client === undefined) return [validationError('required', 'client')];
    row.client_id = client;
  }
  const money = await once('money', () => accountMoney(db, account));
  if (op === 'create') row.currency = money.currency;
  const plan = { bill: [] as number[], release: [] as number[] };
  let lines: Line[] | undefined;
  let totals: { subtotal: number; taxTotal: number; total: number } | undefined;
  const fromQuote = op === 'create' ? (ctx.attached as { quote?: number } | undefined)?.quote : undefined;
  if (fromQuote !== undefined) {
    // POST /quotes/:id/invoice: the quote locked, so two such calls never make two invoices of it.
    const quote = await lockDocument(db, 'quotes', account, fromQuote);
    if (!quote || quote.state !== 'accepted' || quote.deleted)
      throw new ApiError('stateForbids', `the quote is ${quote?.state ?? 'gone'}; only an accepted quote is invoiced`);
    if (await invoicedFrom(db, account, fromQuote))
      throw new ApiError('stateForbids', 'the quote already has an invoice that is not void');
    lines = (JSON.parse(quote.lines) as Line[]).map((l) => ({ ...l, charge: null }));
    totals = { subtotal: Number(quote.subtotal), taxTotal: Number(quote.tax_total), total: Number(quote.total) };
    row.quote_id = fromQuote;
  } else if (item.lines !== undefined) {
    const { priced, errors } = await priceLines(db, account, item.lines as Record<string, unknown>[], money.exponent);
    if (errors.length) return errors;
    lines = priced!.lines.map((l) => ({ ...l, charge: null }));
    totals = priced!;
    if (existing) plan.release = await billedBy(db, account, existing.id);
  } else if (op === 'create' && jobId !== null) {
    // The job first, then its charges: the lock order of the job's deletion (parent before children).
    if (!(await lockJob(db, account, jobId))) return [validationError('reference', 'job')];
    const charges = await unbilledCharges(db, account, jobId);
    const built = linesOfCharges(charges, true);
    if ('errors' in built) return built.errors;
    lines = built.lines;
    totals = built.totals;
    plan.bill = charges.map((c) => c.id);
  } else if (op === 'create') {
    lines = [];
    totals = { subtotal: 0, taxTotal: 0, total: 0 };
  }
  if (lines) {
    row.lines = JSON.stringify(lines);
    Object.assign(row, { subtotal: totals!.subtotal, tax_total: totals!.taxTotal, total: totals!.total });
    row.amount_paid = 0;
    row.balance = totals!.total;
  }
  billing.set(item, plan);
  return [];
}

/** The charges the draft billed are released before its lines are replaced (events: touched first). */
async function fill({ caller, db, item, changes }: TxItemContext<'invoices'>) {
  const plan = billing.get(item);
  if (!plan?.release.length) return;
  await changes.touchBeside('charges', plan.release);
  await setInvoice(db, caller.accountId, plan.release, null, caller.now);
}

/** A new invoice made from a job bills its charges: each charge's `invoice` is set (an event each). */
async function after({ caller, db, item, changes, id }: TxItemContext<'invoices'> & { id: number }) {
  const plan = billing.get(item);
  if (!plan?.bill.length) return;
  await changes.touchBeside('charges', plan.bill);
  await setInvoice(db, caller.accountId, plan.bill, id, caller.now);
}

/** Invoices (PRODUCT §9): Administrators and Employees; Contractors 403. */
export const invoices = defineCollection({
  name: 'invoices',
  table: 'invoices',
  customFields: true,
  description:
    "Invoices in the account's currency: drafts bill a job's charges or take lines; `issue` numbers them INV-000001… gaplessly; payments settle them.",
  fields: invoiceFields,
  counted: true,
  textField: 'notes',
  example: (ref) => ({ client: ref('clients'), lines: [{ description: 'Call-out', quantity: 1, unitPrice: 95 }] }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
    actions: { issue: {}, void: {}, pdf: {}, shareLink: {}, unshare: {}, email: {} },
  },
  // Each invoice sees the charges the batch's earlier invoices billed or released: none is billed twice.
  rules: { check, fill, after, sequential: true },
  actions: {
    issue,
    void: voidInvoice,
    pdf,
    shareLink: shareLinkAction('invoices'),
    unshare: unshareAction('invoices'),
    email: emailAction('invoices', ['issued', 'paid']),
  },
  actionDocs: invoiceActionDocs,
});
