import { f, standardFields, type Field } from '../machinery/fields.js';
import { linesField } from '../machinery/lines.js';

export const QUOTE_STATES = ['draft', 'sent', 'accepted', 'declined'] as const;

const live = { deleted: 0 };

export const quoteFields: Record<string, Field> = {
  job: f.assoc('job_id', 'jobs', {
    required: true,
    referenceFilter: live,
    onDelete: 'cascade',
    members: ['title', 'reference'],
  }),
  client: f.assoc('client_id', 'clients', {
    referenceFilter: live,
    onDelete: 'restrict',
    members: ['name'],
    description: 'Required unless the job has a client, which is the default. Changes only while draft.',
  }),
  number: f.string('number', { readOnly: true, description: 'Q-000001, … per account, given at creation.' }),
  state: f.enum('state', QUOTE_STATES, { readOnly: true, default: 'draft' }),
  validUntil: f.date('valid_until', { nullable: true, description: 'YYYY-MM-DD. Changes only while draft.' }),
  notes: f.text('notes', { nullable: true }),
  lines: linesField('lines', {
    description: "At most 200. Created without lines: the job's quoted charges, in id order. Changes only while draft.",
  }),
  subtotal: f.money('subtotal', { readOnly: true }),
  taxTotal: f.money('tax_total', { readOnly: true }),
  total: f.money('total', { readOnly: true }),
  currency: f.string('currency', { readOnly: true, description: "The account's ISO 4217 code." }),
  ...standardFields(),
};
