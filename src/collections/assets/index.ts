import { defineCollection } from '../machinery/collection.js';
import { byTheirClient } from '../policy.js';
import { clientOfSite } from './repository.js';
import { assetFields } from './schema.js';

/**
 * Equipment at a site (PRODUCT §16): boilers, air handlers, fire panels, with their service
 * history (the jobs that list them). Roles as sites: a Contractor reads the assets of the clients
 * of the jobs they see and never writes one.
 */
export const assets = defineCollection({
  name: 'assets',
  table: 'assets',
  customFields: true,
  search: ['name', 'make', 'model', 'serialNumber'],
  description:
    "Equipment at a client's site, with its service history: `GET /jobs?where=assets.id = N` lists the jobs that include it.",
  fields: assetFields,
  counted: true,
  example: (ref) => ({ site: ref('sites'), name: 'Boiler', make: 'Vaillant', model: 'ecoTEC plus' }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
    own: byTheirClient,
    ownReads: ['jobs', 'visits'],
  },
  rules: {
    // The client is the site's, whenever the site is set.
    async fill({ caller, db, row }) {
      if (row.site_id === undefined) return;
      const client = await clientOfSite(db, caller.accountId, row.site_id);
      if (client !== undefined) row.client_id = client;
    },
  },
});
