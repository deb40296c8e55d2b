import { validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { lineOfCharge, priceLines, totalsOf, scaledAmounts } from '../machinery/lines.js';
import { accountMoney } from '../machinery/money.js';
import { quoteActionDocs, quoteActions } from './actions.js';
import { nextCount, numbered } from '../../db/counters.js';
import { clientExists, jobClient } from '../machinery/document-queries.js';
import { quotedCharges } from './repository.js';
import { quoteFields } from './schema.js';

/** What changes only while draft (PRODUCT §9). */
const DRAFT_ONLY = ['lines', 'client', 'validUntil', 'deleted'] as const;

async function check(ctx: TxItemContext<'quotes'>): Promise<ApiErrorBody[]> {
  const { caller, db, op, item, row, existing, once } = ctx;
  const account = caller.accountId;
  if (op === 'delete')
    return existing!.state === 'draft' ? [] : [validationError('conflict', 'state', 'only a draft quote is deleted')];
  if (existing && existing.state !== 'draft') {
    // A client of another account is already refused by the reference check (1045): said once.
    const client = (item.client as { id: number } | undefined)?.id;
    const refused = client !== undefined && !(await clientExists(db, account, client));
    const errors = DRAFT_ONLY.filter((m) => item[m] !== undefined && !(m === 'client' && refused)).map((m) =>
      validationError('conflict', m, `the quote is ${existing.state}; only a draft changes`),
    );
    if (errors.length) return errors;
  }
  const jobId = row.job_id ?? existing!.job_id;
  if (op === 'create' && item.client === undefined) {
    const client = await jobClient(db, account, jobId);
    if (client === null || client === undefined) return [validationError('required', 'client')];
    row.client_id = client;
  }
  const money = await once('money', () => accountMoney(db, account));
  if (item.lines !== undefined) {
    const { priced, errors } = await priceLines(db, account, item.lines as Record<string, unknown>[], money.exponent);
    if (errors.length) return errors;
    row.lines = JSON.stringify(priced!.lines);
    Object.assign(row, { subtotal: priced!.subtotal, tax_total: priced!.taxTotal, total: priced!.total });
  } else if (op === 'create') {
    const lines = (await quotedCharges(db, account, jobId)).map(lineOfCharge);
    const totals = totalsOf(lines.map(scaledAmounts));
    if (!totals)
      return [validationError('invalid', 'lines', "the document's totals must stay within 1,000,000,000 in magnitude")];
    row.lines = JSON.stringify(lines);
    Object.assign(row, { subtotal: totals.subtotal, tax_total: totals.taxTotal, total: totals.total });
  }
  if (op === 'create') row.currency = money.currency;
  return [];
}

/** The number is drawn last, once every check passed: a refused create uses none. */
async function fill({ caller, db, op, row }: TxItemContext<'quotes'>) {
  if (op === 'create') row.number = numbered('Q', await nextCount(db, caller.accountId, 'quotes'));
}

/** Quotes (PRODUCT §9): Administrators and Employees; Contractors 403. */
export const quotes = defineCollection({
  name: 'quotes',
  table: 'quotes',
  customFields: true,
  description:
    "Quotes for a job in the account's currency, numbered Q-000001… at creation: draft → sent → accepted or declined; an accepted quote becomes a draft invoice.",
  fields: quoteFields,
  counted: true,
  textField: 'notes',
  example: (ref) => ({
    job: ref('jobs'),
    client: ref('clients'),
    lines: [{ description: 'Survey', quantity: 1, unitPrice: 120 }],
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
  },
  rules: { check, fill },
  actions: quoteActions,
  actionDocs: quoteActionDocs,
});
