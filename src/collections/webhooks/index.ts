import { validationError, type ApiErrorBody } from '../../errors.js';
import { refusedUrl, resolveChecked, RefusedTarget } from './address.js';
import { newSecret } from './sign.js';
import { defineCollection, type Item, type ItemContext } from '../machinery/collection.js';
import { ping, rotateSecret, webhookActionDocs } from './actions.js';
import { webhookFields } from './schema.js';

/** Refusals found by `prepare` (DNS, outside the transaction), reported by `check`. */
const refused = new WeakMap<Item, string>();

function validate({ caller, item }: ItemContext<'webhooks'>): ApiErrorBody[] {
  if (typeof item.url !== 'string') return [];
  const why = refusedUrl(item.url, !!caller.privateUrls);
  return why ? [validationError('invalid', 'url', why)] : [];
}

export const webhooks = defineCollection({
  name: 'webhooks',
  table: 'webhooks',
  description:
    'Subscriptions to events: each matching event is POSTed to the URL, signed (Standard Webhooks; docs/events.md).',
  fields: webhookFields,
  // Lists are searched by what people call their webhooks, not by URL.
  textField: 'description',
  // PRODUCT §19: exported without their secrets; an import gives each a new one, listed once.
  transfer: {
    onImport: (row) => {
      row.secret = newSecret();
      return { secret: row.secret };
    },
  },
  example: () => ({
    url: 'https://hooks.example.com/fsm-hook',
    events: ['jobs.*', 'visits.created'],
    active: false,
    description: 'Dispatch board',
  }),
  policy: {
    read: { administrator: 'all', employee: 'none', contractor: 'none' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
    actions: { ping: {}, rotateSecret: {} },
  },
  rules: {
    validate,
    async prepare({ caller, op, item, row }) {
      if (op === 'create') row.secret = newSecret();
      if (typeof item.url !== 'string') return;
      try {
        await resolveChecked(item.url, !!caller.privateUrls);
      } catch (err) {
        // A name that does not resolve yet may later; each attempt checks again.
        if (err instanceof RefusedTarget && !/does not resolve/.test(err.message)) refused.set(item, err.message);
      }
    },
    async check({ item }) {
      const why = refused.get(item);
      return why ? [validationError('invalid', 'url', why)] : [];
    },
    async fill({ op, item, row, db, caller, once }) {
      // It receives the events committed after it is: the account's last one now (src/collections/webhooks/deliveries/fanout.ts).
      if (op === 'create') {
        row.events_after = await once(
          'events_after',
          async () =>
            (
              await db
                .selectFrom('events')
                .select((eb) => eb.fn.max('id').as('id'))
                .where('account_id', '=', caller.accountId)
                .executeTakeFirst()
            )?.id ?? 0,
        );
      }
      // Switched back on by its owner: the server's reason to disable it no longer stands.
      if (op === 'update' && item.active === true) Object.assign(row, { disabled_reason: null, failing_since: null });
    },
    reveal: (row) => ({ secret: row.secret }),
  },
  actions: { ping, rotateSecret },
  actionDocs: webhookActionDocs,
});
