import { ApiError } from '../../errors.js';
import type { ActionAnswer, ActionDoc, ActionRequest, RowOf } from '../machinery/collection.js';
import { documentView, renderDocument, storeDocument } from '../../domain/billing/documents.js';
import { accountMoney, dateIn } from '../machinery/money.js';
import { transition } from '../machinery/write/transition.js';
import { billedBy, paymentCount, setInvoice } from './repository.js';
import { documentRow } from '../../domain/billing/document-queries.js';
import { shareActionDocs } from '../../domain/customers/share-links.js';
import { nextCount, numbered } from '../../db/counters.js';

const itemOf = (request: ActionRequest, name: string): number => {
  if (request.item === undefined)
    throw new ApiError('unknownAction', `'${name}' applies to one invoice: POST /invoices/:id/${name}`);
  return request.item;
};

/** The calendar day after `date` + `days` (YYYY-MM-DD arithmetic in UTC, no time zone involved). */
const plusDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * `POST /invoices/:id/issue`: a draft with at least one line and a total ≥ 0 becomes `issued` (or
 * `paid` at once with a total of 0), numbered from the account's counter in this transaction.
 */
export const issue = transition<RowOf<'invoices'>>('invoices', 'issue', {
  from: ['draft'],
  needs: 'only a draft is issued',
  refuse: ({ row }) =>
    !(JSON.parse(row.lines) as unknown[]).length
      ? 'an invoice without lines cannot be issued'
      : Number(row.total) < 0
        ? 'an invoice with a negative total cannot be issued'
        : undefined,
  // Last, once nothing can refuse any more: the number is drawn with the row's new columns.
  async set({ tx, row, caller }) {
    const { timeZone } = await accountMoney(tx, caller.accountId);
    const issueDate = dateIn(timeZone, caller.now);
    return {
      number: numbered('INV', await nextCount(tx, caller.accountId, 'invoices')),
      state: Number(row.total) === 0 ? 'paid' : 'issued',
      issue_date: issueDate,
      due_date: row.due_date ?? plusDays(issueDate, 30),
    };
  },
});

/** `POST /invoices/:id/void`: an issued invoice without payments becomes `void`; its charges are released. */
export const voidInvoice = transition<RowOf<'invoices'>>('invoices', 'void', {
  from: ['issued'],
  needs: 'only an issued one is voided',
  refuse: async ({ tx, row, caller }) =>
    (await paymentCount(tx, caller.accountId, row.id)) > 0 ? 'an invoice with payments cannot be voided' : undefined,
  async first({ tx, row, caller, changes }) {
    const charges = await billedBy(tx, caller.accountId, row.id);
    await changes.touchBeside('charges', charges);
    await setInvoice(tx, caller.accountId, charges, null, caller.now);
  },
  set: () => ({ state: 'void' }),
});

/** `POST /invoices/:id/pdf`: the invoice as a PDF, stored as a `files` item attached to its job. */
/** An invoice as its PDF and its share page show it: dates, and what was paid once issued. */
export async function invoiceView(
  services: ActionRequest['services'],
  accountId: number,
  row: NonNullable<Awaited<ReturnType<typeof documentRow<'invoices'>>>>,
) {
  const dates: [string, string][] = [];
  if (row.issue_date) dates.push(['Issue date', row.issue_date]);
  if (row.due_date) dates.push(['Due date', row.due_date]);
  const extra: [string, number][] =
    row.state === 'draft'
      ? []
      : [
          ['Paid', Number(row.amount_paid)],
          ['Balance due', Number(row.balance)],
        ];
  return documentView(services.database.db, services.blobs, accountId, 'INVOICE', row, { dates, extra });
}

export async function pdf(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'pdf');
  const { caller, services } = request;
  const db = services.database.db;
  const row = await documentRow(db, 'invoices', caller.accountId, id);
  if (!row) throw new ApiError('itemNotFound');
  const bytes = await renderDocument(await invoiceView(services, caller.accountId, row));
  const name = `${row.number ?? `invoice-${row.id}-draft`}.pdf`;
  return storeDocument(request, bytes, name, row.job_id);
}

export const invoiceActionDocs: Record<string, ActionDoc> = {
  ...shareActionDocs('invoice'),
  issue: {
    on: 'item',
    summary: 'Issue a draft invoice',
    description:
      'A draft with at least one line and a total ≥ 0 becomes `issued` (`paid` with a total of 0), numbered INV-000001… per account without gaps, dated in the account time zone. Any other state: 422, code 1280.',
  },
  pdf: {
    on: 'item',
    answers: 'files',
    summary: 'Render the invoice as a PDF',
    description:
      'Renders the invoice (the business: logo, address, phone, e-mail, tax number; the client: company, address, e-mail; the job: reference, title, PO number, service address; number, dates, every line with its tax rate by name and percent, totals with a summary per rate, payments, payment terms, bank details, notes; Page i of N; A4 or Letter as the account says; DRAFT on drafts) in embedded Unicode fonts, and stores it as a `files` item attached to its job; answers the file, whose `downloadUrl` serves `application/pdf`.',
  },
  void: {
    on: 'item',
    summary: 'Void an issued invoice',
    description:
      'An issued invoice without payments becomes `void`; it keeps its number and its charges are released. Otherwise 422, code 1280.',
  },
};
