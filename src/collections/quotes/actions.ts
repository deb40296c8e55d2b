import { ApiError } from '../../errors.js';
import type { ActionAnswer, ActionDoc, ActionHandler, ActionRequest, RowOf } from '../machinery/collection.js';
import { documentView, renderDocument, storeDocument } from '../../domain/billing/documents.js';
import { dateIn } from '../machinery/money.js';
import { transition } from '../machinery/write/transition.js';
import { documentRow } from '../../domain/billing/document-queries.js';
import { emailAction, shareActionDocs, shareLinkAction, unshareAction } from '../../domain/customers/share-links.js';

const itemOf = (request: ActionRequest, name: string): number => {
  if (request.item === undefined)
    throw new ApiError('unknownAction', `'${name}' applies to one quote: POST /quotes/:id/${name}`);
  return request.item;
};

/** A state change of a quote: `from` → `to`, checked on the locked row (1280 otherwise, nothing changed). */
const step = (name: string, from: string, to: string, needsLines = false) =>
  transition<RowOf<'quotes'>>('quotes', name, {
    from: [from],
    needs: `'${name}' needs ${from}`,
    refuse: ({ row }) =>
      needsLines && !(JSON.parse(row.lines) as unknown[]).length ? 'a quote without lines cannot be sent' : undefined,
    set: () => ({ state: to }),
  });

/**
 * `POST /quotes/:id/invoice`: a new draft invoice with the quote's lines, job, client and `quote`,
 * made by the invoices collection's own write (which locks the quote and refuses a second one).
 */
async function invoice(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'invoice');
  const { caller, services } = request;
  const row = await documentRow(services.database.db, 'quotes', caller.accountId, id);
  if (!row) throw new ApiError('itemNotFound');
  const out = await services.writer.write({
    collection: services.registry.get('invoices')!,
    caller,
    op: 'create',
    input: [{ job: { id: row.job_id }, client: { id: row.client_id } }],
    attached: [{ quote: id }],
  });
  if (out.result === 'failure') return { status: 422, body: out };
  return { status: 200, body: { result: 'success', invoices: out.items, metadata: out.metadata } };
}

/** A quote as its PDF and its share page show it: the business, client, job, lines, dates. */
export async function quoteView(services: ActionRequest['services'], accountId: number, row: QuoteRow) {
  return documentView(services.database.db, services.blobs, accountId, 'QUOTE', row, (timeZone) => {
    const dates: [string, string][] = [['Date', dateIn(timeZone, Number(row.created))]];
    if (row.valid_until) dates.push(['Valid until', row.valid_until]);
    return { dates };
  });
}

type QuoteRow = Parameters<typeof documentView>[4] & { created: number | string; valid_until: string | null };

/** `POST /quotes/:id/pdf`: the quote as a PDF, stored as a `files` item attached to its job. */
async function pdf(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'pdf');
  const { caller, services } = request;
  const row = await documentRow(services.database.db, 'quotes', caller.accountId, id);
  if (!row) throw new ApiError('itemNotFound');
  const bytes = await renderDocument(await quoteView(services, caller.accountId, row));
  return storeDocument(request, bytes, `${row.number}.pdf`, row.job_id);
}

export const quoteActions: Record<string, ActionHandler> = {
  send: step('send', 'draft', 'sent', true),
  accept: step('accept', 'sent', 'accepted'),
  decline: step('decline', 'sent', 'declined'),
  invoice,
  pdf,
  shareLink: shareLinkAction('quotes'),
  unshare: unshareAction('quotes'),
  email: emailAction('quotes', ['sent']),
};

const doc = (summary: string, description: string, answers?: string): ActionDoc => ({
  on: 'item',
  summary,
  description,
  ...(answers ? { answers } : {}),
});
export const quoteActionDocs: Record<string, ActionDoc> = {
  ...shareActionDocs('quote'),
  send: doc('Send a draft quote', 'A draft with at least one line becomes `sent`; otherwise 422, code 1280.'),
  accept: doc('Accept a sent quote', 'A sent quote becomes `accepted`; otherwise 422, code 1280.'),
  decline: doc('Decline a sent quote', 'A sent quote becomes `declined`; otherwise 422, code 1280.'),
  invoice: doc(
    'Invoice an accepted quote',
    'An accepted quote without an invoice that is not void answers `invoices` with a new draft holding its lines, job, client and `quote`; otherwise 422, code 1280.',
    'invoices',
  ),
  pdf: doc(
    'Render the quote as a PDF',
    'Renders the quote as the invoice PDF is made (the business, client, job, lines with tax by name and percent, a summary per rate, Page i of N, A4 or Letter), stores it as a `files` item attached to its job and answers the file.',
    'files',
  ),
};
