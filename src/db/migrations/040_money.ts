import { sql, type CreateTableBuilder, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable } from './scheme.js';

/**
 * Money (PRODUCT §9), part one: the account's currency and time zone, the price book (tax rates,
 * products), quotes and invoices (their lines as JSON text of exact decimals, their totals as integers) and the
 * charges of jobs, each billed by at most one invoice. Invoice numbers come from the account's
 * `counters` row named `invoices`, bumped in the issuing transaction. Amounts are integers of 10^-4 of the currency, quantities of
 * 10^-3, percentages of 10^-4 (src/collections/machinery/money.ts): bigint on both dialects.
 */
export const money = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('accounts')
      .addColumn('currency', 'text', (c) => c.notNull().defaultTo('USD'))
      .execute();
    await db.schema
      .alterTable('accounts')
      .addColumn('time_zone', 'text', (c) => c.notNull().defaultTo('UTC'))
      .execute();
    await createItemTable(
      db,
      dialect,
      'tax_rates',
      (t) =>
        withTimes(
          t
            .addColumn('name', 'text', (c) => c.notNull())
            .addColumn('percent', 'bigint', (c) => c.notNull())
            .addColumn('deleted', 'integer', flag),
        ),
      { counted: true },
    );
    await sql`create unique index tax_rates_account_name on tax_rates (account_id, name)`.execute(db);
    await createItemTable(
      db,
      dialect,
      'products',
      (t) =>
        withTimes(
          t
            .addColumn('name', 'text', (c) => c.notNull())
            .addColumn('code', 'text')
            .addColumn('kind', 'text', (c) => c.notNull())
            .addColumn('unit', 'text', (c) => c.notNull().defaultTo('each'))
            .addColumn('unit_price', 'bigint', (c) => c.notNull())
            .addColumn('unit_cost', 'bigint')
            .addColumn('tax_rate_id', 'integer')
            .addColumn('description', 'text')
            .addColumn('deleted', 'integer', flag),
        ),
      { counted: true, links: [{ column: 'tax_rate_id', table: 'tax_rates', onDelete: 'set null' }] },
    );
    await sql`create unique index products_account_code on products (account_id, code)`.execute(db);
    await createItemTable(
      db,
      dialect,
      'quotes',
      (t) =>
        documentColumns(
          t
            .addColumn('job_id', 'integer', (c) => c.notNull())
            .addColumn('client_id', 'integer', (c) => c.notNull())
            .addColumn('number', 'text', (c) => c.notNull())
            .addColumn('state', 'text', (c) => c.notNull().defaultTo('draft'))
            .addColumn('valid_until', 'text'),
          [],
        ),
      {
        counted: true,
        links: [
          { column: 'job_id', table: 'jobs', onDelete: 'cascade' },
          { column: 'client_id', table: 'clients', onDelete: 'restrict' },
        ],
      },
    );
    await sql`create unique index quotes_account_number on quotes (account_id, number)`.execute(db);
    await createItemTable(
      db,
      dialect,
      'invoices',
      (t) =>
        documentColumns(
          t
            .addColumn('job_id', 'integer')
            .addColumn('client_id', 'integer')
            .addColumn('quote_id', 'integer')
            .addColumn('number', 'text')
            .addColumn('state', 'text', (c) => c.notNull().defaultTo('draft'))
            .addColumn('issue_date', 'text')
            .addColumn('due_date', 'text'),
          ['amount_paid', 'balance'],
        ),
      {
        counted: true,
        links: [
          { column: 'job_id', table: 'jobs', onDelete: 'set null' },
          { column: 'client_id', table: 'clients', onDelete: 'restrict' },
          { column: 'quote_id', table: 'quotes', onDelete: 'set null' },
        ],
      },
    );
    await sql`create unique index invoices_account_number on invoices (account_id, number)`.execute(db);
    await createItemTable(
      db,
      dialect,
      'charges',
      (t) =>
        withTimes(
          t
            .addColumn('job_id', 'integer', (c) => c.notNull())
            .addColumn('product_id', 'integer')
            .addColumn('kind', 'text', (c) => c.notNull())
            .addColumn('description', 'text', (c) => c.notNull())
            .addColumn('unit_price', 'bigint', (c) => c.notNull())
            .addColumn('unit_cost', 'bigint')
            .addColumn('tax_rate_id', 'integer')
            .addColumn('quantity', 'bigint', (c) => c.notNull())
            .addColumn('tax_percent', 'bigint')
            .addColumn('stage', 'text', (c) => c.notNull().defaultTo('actual'))
            .addColumn('billable', 'integer', (c) => c.notNull().defaultTo(1))
            .addColumn('user_id', 'integer')
            .addColumn('visit_id', 'integer')
            .addColumn('subtotal', 'bigint', (c) => c.notNull())
            .addColumn('tax', 'bigint', (c) => c.notNull())
            .addColumn('total', 'bigint', (c) => c.notNull())
            .addColumn('invoice_id', 'integer')
            .addColumn('deleted', 'integer', flag),
        ),
      {
        counted: true,
        links: [
          { column: 'job_id', table: 'jobs', onDelete: 'cascade' },
          { column: 'invoice_id', table: 'invoices', onDelete: 'set null' },
          { column: 'product_id', table: 'products', onDelete: 'set null' },
          { column: 'tax_rate_id', table: 'tax_rates', onDelete: 'set null' },
          { column: 'user_id', table: 'users', onDelete: 'set null' },
          { column: 'visit_id', table: 'visits', onDelete: 'set null' },
        ],
      },
    );
  },
});

/**
 * A quote's and an invoice's closing columns, in this order: notes, lines (JSON text), the totals
 * (`subtotal`, `tax_total`, `total`, then `amounts`, each 0 by default), currency, deleted and times.
 */
function documentColumns<T extends string, C extends string>(t: CreateTableBuilder<T, C>, amounts: string[]) {
  let d = t.addColumn('notes', 'text').addColumn('lines', 'text', (c) => c.notNull().defaultTo('[]'));
  for (const col of ['subtotal', 'tax_total', 'total', ...amounts])
    d = d.addColumn(col, 'bigint', (c) => c.notNull().defaultTo(0));
  return withTimes(d.addColumn('currency', 'text', (c) => c.notNull()).addColumn('deleted', 'integer', flag));
}
