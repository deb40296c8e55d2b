import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { checkTemplateFields } from '../../domain/forms/template.js';
import { formTemplateFields } from './schema.js';

/**
 * The fields are stored as checked (`required` explicit); a write that changes their value moves
 * `version` (a rewrite of the same fields does not).
 */
async function fill({ op, item, row, existing }: TxItemContext<'form_templates'>): Promise<void> {
  if (item.fields === undefined) return;
  const fields = JSON.stringify(checkTemplateFields(item.fields).fields);
  row.fields = fields;
  if (op === 'update' && existing && existing.fields !== fields) row.template_version = existing.template_version + 1;
}

/** Forms and checklists (PRODUCT §17): Administrators write, every role reads. */
export const formTemplates = defineCollection({
  name: 'formTemplates',
  table: 'form_templates',
  description:
    'Forms and checklists crews fill in on a job (safety checks, gas readings, photos, the customer’s signature): ' +
    'versioned fields of eight types. Administrators write; every role reads.',
  fields: formTemplateFields,
  counted: true,
  example: () => ({
    name: 'Gas safety check',
    fields: [
      { key: 'applianceSafe', label: 'Appliance safe to use', type: 'boolean', required: true },
      { key: 'pressure', label: 'Working pressure (mbar)', type: 'number' },
      { key: 'signature', label: 'Customer signature', type: 'signature' },
    ],
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'all' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
  },
  rules: { fill },
});
