import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';
import { addCustomFields, addSearch } from './070_custom_fields.js';

const ADDRESS = [
  'address_line1',
  'address_line2',
  'address_city',
  'address_region',
  'address_postcode',
  'address_country',
];

/**
 * PRODUCT §12 on the collections that came beside it: `customFields` on sites, contacts, quotes,
 * invoices and products; `q` on sites (name, notes, address) and contacts (first and last name,
 * title, email), as their declarations list them.
 */
export const customFieldsEverywhere = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const table of ['sites', 'contacts', 'quotes', 'invoices', 'products'])
      await addCustomFields(db, dialect, table);
    await addSearch(db, dialect, 'sites', ['name', 'notes', ...ADDRESS]);
    await addSearch(db, dialect, 'contacts', ['first_name', 'last_name', 'title', 'email']);
  },
});
