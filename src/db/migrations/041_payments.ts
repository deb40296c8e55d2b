import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { withTimes, type AnyDb } from './columns.js';
import { createItemTable } from './scheme.js';

/** Money (PRODUCT §9), part two: payments of issued invoices (amounts in 10^-4 of the currency). */
export const payments = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await createItemTable(
      db,
      dialect,
      'payments',
      (t) =>
        withTimes(
          t
            .addColumn('invoice_id', 'integer', (c) => c.notNull())
            .addColumn('amount', 'bigint', (c) => c.notNull())
            .addColumn('method', 'text', (c) => c.notNull().defaultTo('other'))
            .addColumn('paid_at', 'bigint', (c) => c.notNull())
            .addColumn('reference', 'text'),
        ),
      { counted: true, links: [{ column: 'invoice_id', table: 'invoices', onDelete: 'restrict' }] },
    );
  },
});
