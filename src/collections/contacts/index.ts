import { validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type ItemContext } from '../machinery/collection.js';
import { byTheirClient } from '../policy.js';
import { clearPrimary, primaryContacts } from './repository.js';
import { contactFields } from './schema.js';

/** The client a contact has once the item is written, and whether it is then its primary contact. */
function after({ op, item, row, existing }: ItemContext<'contacts'>): { client: number; primary: boolean } | undefined {
  if (op === 'delete') return undefined;
  const client = (row.client_id ?? existing?.client_id) as number | undefined;
  if (client === undefined) return undefined;
  const primary = item.isPrimary === true || (item.isPrimary === undefined && existing?.is_primary === 1);
  return { client, primary };
}

/** A batch makes at most one contact of a client primary. */
async function verify({ items }: { items: ItemContext<'contacts'>[] }): Promise<ApiErrorBody[][]> {
  const made = new Set<number>();
  return items.map((i) => {
    const a = after(i);
    if (!a?.primary || i.item.isPrimary !== true) return [];
    if (!made.has(a.client)) {
      made.add(a.client);
      return [];
    }
    return [validationError('conflict', 'isPrimary', 'another contact of this client is made primary in this batch')];
  });
}

export const contacts = defineCollection({
  name: 'contacts',
  table: 'contacts',
  customFields: true,
  search: ['firstName', 'lastName', 'title', 'email'],
  description: "People at a client; one of them may be the client's primary contact.",
  fields: contactFields,
  counted: true,
  example: (ref) => ({
    client: ref('clients'),
    firstName: 'Sam',
    lastName: 'Reed',
    title: 'Facilities manager',
    email: 'sam@example.com',
    mobile: '+447700900002',
    isPrimary: true,
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
    own: byTheirClient,
    ownReads: ['jobs', 'visits'],
  },
  rules: {
    verify,
    // The fill below changes the client's old primary contact, a row the batch may not name.
    exclusive: true,
    // A new primary contact clears the old one first (a unique index allows one per client), told
    // to the recorder so the old one's change is an event of its own.
    async fill(i) {
      const a = after(i);
      if (!a?.primary) return;
      const { caller, db, existing, item, changes } = i;
      if (item.isPrimary !== true && a.client === existing?.client_id) return;
      const old = await primaryContacts(db, caller.accountId, a.client, existing?.id ?? 0);
      if (!old.length) return;
      await changes.touch(contacts, old);
      await clearPrimary(db, caller.accountId, old, caller.now);
    },
  },
});
