import { f, standardFields, type Field } from '../machinery/fields.js';
import { addressField } from '../clients/schema.js';

export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

// Logically deleted clients and statuses stay readable on old jobs but cannot be newly referenced.
const live = { deleted: 0 };

export const jobFields: Record<string, Field> = {
  title: f.string('title', { required: true, minLength: 1, maxLength: 200 }),
  reference: f.string('reference', {
    minLength: 1, maxLength: 50, unique: 'account', description: 'Unique in the account; generated as J-000123 when not given.',
  }),
  description: f.text('description', { nullable: true }),
  client: f.assoc('client_id', 'clients', { nullable: true, referenceFilter: live, members: { name: { column: 'name', type: 'string' } } }),
  status: f.assoc('status_id', 'statuses', {
    referenceFilter: live,
    description: "Default: the account's default status.",
    members: {
      label: { column: 'label', type: 'string' },
      colour: { column: 'colour', type: 'string', nullable: true },
      group: { column: 'status_group', type: 'string' },
      isDefault: { column: 'is_default', type: 'boolean' },
    },
  }),
  priority: f.enum('priority', PRIORITIES, { default: 'normal' }),
  orderNumber: f.string('order_number', { nullable: true, maxLength: 100 }),
  address: addressField(),
  dueDate: f.date('due_date', { nullable: true, description: 'A calendar date, YYYY-MM-DD.' }),
  createdBy: f.assoc('created_by', 'users', {
    readOnly: true,
    nullable: true,
    members: { firstName: { column: 'first_name', type: 'string' }, lastName: { column: 'last_name', type: 'string' } },
  }),
  ...standardFields(),
};
