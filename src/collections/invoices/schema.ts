import { f, standardFields, type Field } from '../machinery/fields.js';
import { linesField } from '../machinery/lines.js';

export const INVOICE_STATES = ['draft', 'issued', 'paid', 'void'] as const;

const live = { deleted: 0 };

export const invoiceFields: Record<string, Field> = {
  job: f.assoc('job_id', 'jobs', { nullable: true, referenceFilter: live, members: ['title', 'reference'] }),
  client: f.assoc('client_id', 'clients', {
    nullable: true,
    referenceFilter: live,
    onDelete: 'restrict',
    members: ['name'],
    description: 'Required unless the job has a client, which is the default. Changes only while draft.',
  }),
  quote: f.assoc('quote_id', 'quotes', {
    readOnly: true,
    nullable: true,
    members: ['number', 'state'],
    description: 'The quote the invoice was made from (POST /quotes/:id/invoice), or null.',
  }),
  agreement: f.assoc('agreement_id', 'agreements', {
    readOnly: true,
    nullable: true,
    members: ['name'],
    description:
      "The service agreement whose billing made this draft (PRODUCT §16: a visit's check-out with `perVisit`, a period begun with `monthly`, `quarterly` or `yearly`), or null.",
  }),
  number: f.string('number', {
    readOnly: true,
    nullable: true,
    description: 'INV-000001, … per account, given at issue (null while draft).',
  }),
  state: f.enum('state', INVOICE_STATES, { readOnly: true, default: 'draft' }),
  issueDate: f.date('issue_date', { readOnly: true, nullable: true, description: "The account's date at issue." }),
  dueDate: f.date('due_date', { nullable: true, description: 'Default at issue: the issue date + 30 days.' }),
  notes: f.text('notes', { nullable: true, description: 'Changes in any state.' }),
  lines: linesField('lines', {
    withCharge: true,
    description:
      "At most 200. Created with a job and no lines: the job's billable actual charges not yet billed. Changes only while draft; setting it releases the charges the draft billed.",
  }),
  subtotal: f.money('subtotal', { readOnly: true }),
  taxTotal: f.money('tax_total', { readOnly: true }),
  total: f.money('total', { readOnly: true }),
  amountPaid: f.money('amount_paid', { readOnly: true }),
  balance: f.money('balance', { readOnly: true }),
  currency: f.string('currency', { readOnly: true, description: "The account's ISO 4217 code." }),
  viewedAt: f.time('viewed_at', {
    nullable: true,
    description: 'When a share link of the invoice was first opened.',
  }),
  ...standardFields(),
};
