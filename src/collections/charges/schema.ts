import { f, standardFields, type Field } from '../machinery/fields.js';
import { CHARGE_KINDS, PERCENT_SCALE, QUANTITY_SCALE } from '../machinery/money.js';

export const CHARGE_STAGES = ['quoted', 'actual'] as const;

const live = { deleted: 0 };

export const chargeFields: Record<string, Field> = {
  // Named `job`: other features (events' visibility) follow a charge to its job by this association.
  job: f.assoc('job_id', 'jobs', {
    required: true,
    referenceFilter: live,
    onDelete: 'cascade',
    members: ['title', 'reference'],
  }),
  product: f.assoc('product_id', 'products', { nullable: true, referenceFilter: live, members: ['name', 'code'] }),
  kind: f.enum('kind', CHARGE_KINDS, { description: "Default: the product's; required without a product." }),
  description: f.text('description', {
    minLength: 1,
    description: "Default: the product's name (or description); required without a product.",
  }),
  unitPrice: f.money('unit_price', {
    description: "Default: the product's; required without a product. May be negative.",
  }),
  unitCost: f.money('unit_cost', { nullable: true, description: "Default: the product's." }),
  taxRate: f.assoc('tax_rate_id', 'taxRates', {
    nullable: true,
    referenceFilter: live,
    members: ['name', 'percent'],
    description: "Default: the product's.",
  }),
  quantity: f.decimal('quantity', QUANTITY_SCALE, {
    required: true,
    positive: true,
    description: 'Greater than 0, at most 3 decimals.',
  }),
  taxPercent: f.decimal('tax_percent', PERCENT_SCALE, {
    readOnly: true,
    nullable: true,
    description: "The tax rate's percent when the charge was last written; null without a tax rate.",
  }),
  stage: f.enum('stage', CHARGE_STAGES, { default: 'actual' }),
  billable: f.boolean('billable', { default: true }),
  user: f.assoc('user_id', 'users', {
    nullable: true,
    referenceFilter: live,
    members: ['firstName', 'lastName'],
    description: 'Who did the work; default: the caller.',
  }),
  visit: f.assoc('visit_id', 'visits', {
    nullable: true,
    members: ['label'],
    description: 'A visit of the same job, or null.',
  }),
  subtotal: f.money('subtotal', { readOnly: true, description: 'quantity × unitPrice, rounded to the minor unit.' }),
  tax: f.money('tax', { readOnly: true, description: 'subtotal × taxPercent / 100, rounded to the minor unit.' }),
  total: f.money('total', { readOnly: true, description: 'subtotal + tax.' }),
  invoice: f.assoc('invoice_id', 'invoices', {
    readOnly: true,
    nullable: true,
    members: ['number', 'state'],
    description: 'The invoice that bills the charge; while it is not void the charge cannot change.',
  }),
  ...standardFields(),
};
