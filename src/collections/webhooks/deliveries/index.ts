import { ApiError } from '../../../errors.js';
import { f, standardFields } from '../../machinery/fields.js';
import { defineCollection, type ActionAnswer, type ActionRequest } from '../../machinery/collection.js';
import { readByIds } from '../../machinery/read.js';
import { NO_ITEMS } from '../../machinery/write/index.js';
import { queueAgain } from './repository.js';

/** `POST /deliveries/:id/retry`: one more attempt, now (whatever its state). */
async function retry(request: ActionRequest): Promise<ActionAnswer> {
  if (request.item === undefined)
    throw new ApiError('unknownAction', "'retry' applies to one delivery: POST /deliveries/:id/retry");
  const { caller, services } = request;
  if (!(await queueAgain(services.database.db, caller.accountId, request.item, caller.now)))
    throw new ApiError('itemNotFound');
  const items = await readByIds(services.database.db, deliveries, caller, [request.item], {
    fields: deliveries.defaultFields,
    expand: new Map(),
  });
  return { status: 200, body: { result: 'success', deliveries: items, metadata: NO_ITEMS } };
}

/** The queue of webhook deliveries, written by the server only (./worker.ts). */
export const deliveries = defineCollection({
  name: 'deliveries',
  table: 'deliveries',
  description:
    'One delivery per event and subscribed webhook (and per ping), with its attempts. Read-only; POST /deliveries/:id/retry sends again.',
  readOnly: true,
  transfer: { exported: false },
  permission: 'webhooks',
  // Its rows exist because of events: recording them would make events of events.
  recorded: false,
  textField: 'type',
  example: (ref) => ({ webhook: ref('webhooks'), type: 'jobs.created' }),
  fields: {
    webhook: f.assoc('webhook_id', 'webhooks', { readOnly: true, onDelete: 'cascade', members: ['url'] }),
    event: f.assoc('event_id', 'events', {
      readOnly: true,
      nullable: true,
      onDelete: 'cascade',
      description: 'null for a ping.',
    }),
    type: f.string('type', { readOnly: true }),
    state: f.enum('state', ['pending', 'succeeded', 'failed'], { readOnly: true }),
    attempts: f.integer('attempts', { readOnly: true }),
    lastStatus: f.integer('last_status', {
      readOnly: true,
      nullable: true,
      description: 'The HTTP status of the last attempt, or null (no answer).',
    }),
    lastError: f.string('last_error', { readOnly: true, nullable: true, maxLength: 1000 }),
    nextAttemptAt: f.time('next_attempt_at', {
      description: 'When the next attempt is due (pending), or when the last one ended.',
    }),
    ...standardFields({ deleted: false }),
  },
  policy: {
    read: { administrator: 'all', employee: 'none', contractor: 'none' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
    actions: { retry: {} },
  },
  actions: { retry },
  actionDocs: {
    retry: { on: 'item', summary: 'Queue one more attempt now', description: 'Answers the delivery, pending again.' },
  },
});
