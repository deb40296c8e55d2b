import type { ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { CHARGE_KINDS, accountMoney, checkCurrencyDecimals } from '../machinery/money.js';

const live = { deleted: 0 };

export const productFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 200, contains: true }),
  code: f.string('code', { nullable: true, maxLength: 100, unique: 'account', description: 'Unique in the account.' }),
  kind: f.enum('kind', CHARGE_KINDS, { required: true }),
  unit: f.string('unit', { minLength: 1, maxLength: 50, default: 'each' }),
  unitPrice: f.money('unit_price', { required: true, description: "In the account's currency; may be negative." }),
  unitCost: f.money('unit_cost', { nullable: true }),
  taxRate: f.assoc('tax_rate_id', 'taxRates', {
    nullable: true,
    referenceFilter: live,
    members: ['name', 'percent'],
  }),
  description: f.text('description', { nullable: true }),
  ...standardFields(),
};

async function check({ caller, db, op, item, once }: TxItemContext<'products'>): Promise<ApiErrorBody[]> {
  if (op === 'delete') return [];
  const { exponent } = await once('money', () => accountMoney(db, caller.accountId));
  return checkCurrencyDecimals(productFields, item, exponent);
}

/** The price book (PRODUCT §9): Administrators write, every role reads. */
export const products = defineCollection({
  name: 'products',
  table: 'products',
  customFields: true,
  description:
    'The price book: what charges and document lines are made of. Administrators write it; every role reads.',
  fields: productFields,
  counted: true,
  example: () => ({ name: 'Labour, per hour', kind: 'labour', unit: 'hour', unitPrice: 85.5 }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'all' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
  },
  rules: { check },
});
