import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * What a business's quotes and invoices print of the business itself (issue 50): its address (JSON
 * of the clients' address members), phone, e-mail, tax number, logo (JSON `{id}` of an image
 * `files` item of the account), payment terms, bank details and paper size (`A4` | `Letter`; null:
 * Letter for an address in the US or Canada, A4 elsewhere). All null until an Administrator sets them.
 */
const COLUMNS: [string, string][] = [
  ['address', 'The business address printed on its documents: JSON of line1, line2, city, region, postcode, country'],
  ['phone', 'The business phone printed on its documents'],
  ['email', 'The business e-mail printed on its documents'],
  ['tax_number', 'The business tax (VAT, GST, EIN…) number printed on its documents'],
  ['logo', 'JSON {id} of the image files item printed on its documents'],
  ['payment_terms', 'Payment terms printed on its invoices'],
  ['bank_details', 'Bank details printed on its invoices'],
  ['paper_size', 'A4 or Letter; null: Letter for an address in the US or Canada, A4 elsewhere'],
];

export const accountDocuments = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const [column, comment] of COLUMNS) {
      await db.schema.alterTable('accounts').addColumn(column, 'text').execute();
      if (dialect === 'postgres')
        await sql`comment on column ${sql.ref(`accounts.${column}`)} is ${sql.lit(comment)}`.execute(db);
    }
  },
});
