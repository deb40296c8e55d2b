import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type ItemContext, type TxItemContext } from '../machinery/collection.js';
import { accountMoney, checkCurrencyDecimals, lineAmounts, withinLimit } from '../machinery/money.js';
import { byTheirJob } from '../policy.js';
import { chargeFields } from './schema.js';
import { productOf, taxPercentOf, visitJobOf } from './repository.js';

const idOf = (v: unknown) => (v as { id?: number } | null | undefined)?.id;

/**
 * A Contractor writes only `actual` charges on the jobs they can see, with themselves as `user`:
 * they change only such charges of theirs, and never make one anyone else's or quoted.
 */
function authorize({ caller, op, item, existing }: ItemContext<'charges'>): void {
  if (caller.role !== 'contractor') return;
  if (existing && (existing.user_id !== caller.userId || existing.stage !== 'actual'))
    throw new ApiError('roleForbids', "contractors change only their own 'actual' charges");
  if (op === 'delete') return;
  if (item.user !== undefined && idOf(item.user) !== caller.userId)
    throw new ApiError('roleForbids', 'contractors write charges only with themselves as user');
  if (item.stage !== undefined && item.stage !== 'actual')
    throw new ApiError('roleForbids', "contractors write only 'actual' charges");
}

/**
 * In the transaction: the product's defaults, the required members without one, the account
 * currency's decimals, the visit's job, and the amounts (PRODUCT §9's roundings, money.ts), which
 * must stay within 1e9 (else a failure naming `quantity`).
 */
async function check(ctx: TxItemContext<'charges'>): Promise<ApiErrorBody[]> {
  const { caller, db, op, item, row, existing, once } = ctx;
  // Billed: frozen until its invoice is voided or the draft deleted (either releases it).
  if (existing && existing.invoice_id !== null)
    return [validationError('conflict', 'invoice', 'the charge is billed by an invoice that is not void')];
  if (op === 'delete') return [];
  const { exponent } = await once('money', () => accountMoney(db, caller.accountId));
  const errors = checkCurrencyDecimals(chargeFields, item, exponent);
  if (op === 'create') {
    const productId = idOf(item.product);
    const product = productId !== undefined ? await productOf(db, caller.accountId, productId) : undefined;
    if (product) {
      row.kind ??= product.kind;
      row.description ??= product.description || product.name;
      row.unit_price ??= product.unit_price;
      if (item.unitCost === undefined) row.unit_cost = product.unit_cost;
      if (item.taxRate === undefined) row.tax_rate_id = product.tax_rate_id;
    } else {
      for (const [name, column] of [
        ['kind', 'kind'],
        ['description', 'description'],
        ['unitPrice', 'unit_price'],
      ] as const)
        if (row[column] === undefined || row[column] === null) errors.push(validationError('required', name));
    }
    if (item.user === undefined) row.user_id = caller.userId || null;
  }
  const jobId = row.job_id ?? existing!.job_id;
  const visitId = row.visit_id !== undefined ? row.visit_id : existing?.visit_id;
  if (visitId !== null && visitId !== undefined && (item.visit !== undefined || item.job !== undefined)) {
    const visitJob = await visitJobOf(db, caller.accountId, visitId);
    if (visitJob !== undefined && visitJob !== jobId)
      errors.push(validationError('invalid', 'visit', 'must be a visit of the same job'));
  }
  if (errors.length) return errors;
  const taxRateId = row.tax_rate_id !== undefined ? row.tax_rate_id : (existing?.tax_rate_id ?? null);
  const percent = taxRateId === null ? null : await taxPercentOf(db, caller.accountId, taxRateId);
  const amounts = lineAmounts(
    Number(row.quantity ?? existing!.quantity),
    Number(row.unit_price ?? existing!.unit_price),
    percent,
    exponent,
  );
  if (!withinLimit(amounts.subtotal) || !withinLimit(amounts.total))
    return [validationError('invalid', 'quantity', 'subtotal and total must stay within 1,000,000,000 in magnitude')];
  Object.assign(row, { tax_percent: percent, ...amounts });
  return [];
}

/** Charges on jobs (PRODUCT §9): quoted or actual, billable or not, priced from the price book. */
export const charges = defineCollection({
  name: 'charges',
  table: 'charges',
  description:
    "What is quoted or done on a job, priced in the account's currency. A Contractor reads the charges of the jobs they can see and writes only 'actual' charges on those jobs with themselves as user.",
  fields: chargeFields,
  counted: true,
  textField: 'description',
  example: (ref) => ({ job: ref('jobs'), kind: 'labour', description: 'Labour', unitPrice: 85, quantity: 1.5 }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    own: byTheirJob,
    ownReads: ['visits'],
    // The job is checked in the transaction (onSeenJob); the user and stage by authorize.
    ownsNew: () => true,
    onSeenJob: 'job',
  },
  rules: { authorize, check },
});
