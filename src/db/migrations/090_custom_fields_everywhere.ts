import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';
import { ADDRESS, addCustomFields, addSearch } from './070_custom_fields.js';

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
