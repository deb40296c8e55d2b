import { defineCollection } from '../machinery/collection.js';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { PERCENT_SCALE } from '../machinery/money.js';

export const taxRateFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 200, unique: 'account' }),
  percent: f.decimal('percent', PERCENT_SCALE, {
    required: true,
    minimum: 0,
    maximum: 100,
    description: 'A percentage from 0 to 100, at most 4 decimals.',
  }),
  ...standardFields(),
};

/** The account's tax rates (PRODUCT §9): Administrators write, every role reads. */
export const taxRates = defineCollection({
  name: 'taxRates',
  table: 'tax_rates',
  description: 'Tax rates of the price book: a name and a percentage. Administrators write them; every role reads.',
  fields: taxRateFields,
  counted: true,
  example: () => ({ name: 'Sales tax', percent: 8.875 }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'all' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
  },
});
