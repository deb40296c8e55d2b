import { validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { linesOfCharges, priceLines } from '../machinery/lines.js';
import { afterDraftErrors } from '../../domain/billing/state.js';
import { accountMoney } from '../machinery/money.js';
import { quoteActionDocs, quoteActions } from './actions.js';
import { nextCount, numbered } from '../../db/counters.js';
import { jobClient, lockJob } from '../../domain/billing/document-queries.js';
import { quotedCharges } from './repository.js';
import { quoteFields } from './schema.js';

async function check(ctx: TxItemContext<'quotes'>): Promise<ApiErrorBody[]> {
  const { caller, db, op, item, row, existing, once } = ctx;
  const account = caller.accountId;
  if (op === 'delete')
    return existing!.state === 'draft' ? [] : [validationError('conflict', 'state', 'only a draft quote is deleted')];
  // Sequential: the reference checks already passed, so each member refused here is said once.
  if (existing) {
    const refused = afterDraftErrors(item, existing.state, 'quote');
    if (refused.length) return refused;
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
    if (!(await lockJob(db, account, jobId))) return [validationError('reference', 'job')];
    const built = linesOfCharges(await quotedCharges(db, account, jobId), false);
    if ('errors' in built) return built.errors;
    row.lines = JSON.stringify(built.lines);
    Object.assign(row, {
      subtotal: built.totals.subtotal,
      tax_total: built.totals.taxTotal,
      total: built.totals.total,
    });
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
    actions: {
      send: {},
      accept: {},
      decline: {},
      invoice: {},
      pdf: {},
      shareLink: {},
      unshare: {},
      email: {},
    },
  },
  // Sequential: a quote's checks run once the batch's reference checks passed (each refusal said once).
  rules: { check, fill, sequential: true },
  actions: quoteActions,
  actionDocs: quoteActionDocs,
});
