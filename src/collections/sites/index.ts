import { validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { byTheirClient } from '../policy.js';
import { siteHasJobOfOtherClient } from './repository.js';
import { siteFields } from './schema.js';

/** A site keeps its client while a job names it: a job's site is always a site of the job's client. */
async function check({ caller, db, op, item, existing }: TxItemContext<'sites'>): Promise<ApiErrorBody[]> {
  if (op !== 'update' || !existing || item.client === undefined) return [];
  const client = (item.client as { id: number }).id;
  if (client === existing.client_id) return [];
  return (await siteHasJobOfOtherClient(db, caller.accountId, existing.id, client))
    ? [validationError('conflict', 'client', 'jobs of another client name this site')]
    : [];
}

export const sites = defineCollection({
  name: 'sites',
  table: 'sites',
  customFields: true,
  search: ['name', 'notes', 'address'],
  description: "Where work is done: a client's places (a client may have many).",
  fields: siteFields,
  counted: true,
  example: (ref) => ({
    client: ref('clients'),
    name: 'Main depot',
    address: { line1: '2 Mill Lane', city: 'Leeds', location: { lat: 53.7996, lng: -1.5491 } },
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
    own: byTheirClient,
    ownReads: ['jobs', 'visits'],
  },
  rules: { check },
});
