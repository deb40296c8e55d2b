import { validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { accountMoney, checkCurrencyDecimals } from '../machinery/money.js';
import { applyPayment, lockInvoiceOf } from './repository.js';

export const PAYMENT_METHODS = ['cash', 'card', 'bankTransfer', 'cheque', 'other'] as const;

export const paymentFields: Record<string, Field> = {
  invoice: f.assoc('invoice_id', 'invoices', {
    required: true,
    members: ['number', 'state'],
    description: 'An issued invoice.',
  }),
  amount: f.money('amount', {
    required: true,
    minimum: 0,
    description: "Greater than 0, at most the invoice's balance when it commits.",
  }),
  method: f.enum('method', PAYMENT_METHODS, { default: 'other' }),
  paidAt: f.instant('paid_at', { description: 'Default: now.' }),
  reference: f.string('reference', {
    nullable: true,
    maxLength: 200,
    description: 'The only member that changes later.',
  }),
  ...standardFields({ deleted: false }),
};

/**
 * The invoice row is locked before its balance is read, so two payments racing for one balance run
 * one after the other and the second sees what the first left: it fails rather than overpay.
 */
async function check({
  caller,
  db,
  op,
  item,
  row,
  existing,
  once,
}: TxItemContext<'payments'>): Promise<ApiErrorBody[]> {
  if (op === 'update') {
    // Another account's invoice is already refused by the reference check (1045): said once.
    const other =
      item.invoice !== undefined && !(await lockInvoiceOf(db, caller.accountId, (item.invoice as { id: number }).id));
    const errors = ['invoice', 'amount', 'method', 'paidAt']
      .filter((m) => item[m] !== undefined && !(m === 'invoice' && other))
      .map((m) => validationError('conflict', m, 'only reference changes on a payment'));
    return errors;
  }
  const invoiceId = op === 'create' ? (item.invoice as { id: number }).id : existing!.invoice_id;
  const invoice = await lockInvoiceOf(db, caller.accountId, invoiceId);
  if (!invoice) return []; // the pipeline's reference check names it (1045)
  if (op === 'delete') return [];
  const { exponent } = await once('money', () => accountMoney(db, caller.accountId));
  const errors = checkCurrencyDecimals(paymentFields, item, exponent);
  if (errors.length) return errors;
  // A paid invoice has a balance of 0: a payment racing the one that paid it fails on its amount.
  if (invoice.state !== 'issued' && invoice.state !== 'paid')
    return [validationError('invalid', 'invoice', `must be an issued invoice (it is ${invoice.state})`)];
  const amount = Number(row.amount);
  if (!(amount > 0)) return [validationError('invalid', 'amount', 'must be greater than 0')];
  if (amount > Number(invoice.balance))
    return [validationError('invalid', 'amount', "must be at most the invoice's balance")];
  if (row.paid_at === undefined || row.paid_at === null) row.paid_at = caller.now;
  return [];
}

/** The invoice's balance moves with the payment (its event), and its state with a zero balance. */
async function after({ caller, db, op, row, existing, changes }: TxItemContext<'payments'> & { id: number }) {
  if (op === 'update') return;
  const invoiceId = op === 'create' ? row.invoice_id! : existing!.invoice_id;
  const amount = op === 'create' ? Number(row.amount) : -Number(existing!.amount);
  await changes.touchBeside('invoices', [invoiceId]);
  await applyPayment(db, caller.accountId, invoiceId, amount, caller.now);
}

/** Payments of issued invoices (PRODUCT §9): Administrators and Employees; Contractors 403. */
export const payments = defineCollection({
  name: 'payments',
  table: 'payments',
  description:
    'Money received for an issued invoice. Never more than the balance; a payment that brings it to 0 makes the invoice paid. Only `reference` changes; Administrators delete payments, which gives the amount back.',
  fields: paymentFields,
  counted: true,
  textField: 'reference',
  example: (ref) => ({ invoice: ref('invoices'), amount: 10, method: 'card' }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
    // Payments are deleted (physically) by Administrators only.
    delete: { roles: ['administrator'], why: 'only Administrators delete payments' },
  },
  // Each payment sees the balance the batch's earlier payments left: a batch never overpays.
  rules: { check, after, sequential: true },
});
