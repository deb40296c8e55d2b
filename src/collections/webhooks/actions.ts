import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { readByIds } from '../machinery/read.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { ApiError } from '../../errors.js';
import { currentSecret, queuePing, rotate } from './repository.js';
import { newMessageId, newSecret } from './sign.js';

const itemOf = (request: ActionRequest, name: string): number => {
  if (request.item === undefined)
    throw new ApiError('unknownAction', `'${name}' applies to one webhook: POST /webhooks/:id/${name}`);
  return request.item;
};

/** `POST /webhooks/:id/ping`: queues a `webhook.ping` delivery, sent at once by the worker. */
export async function ping(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'ping');
  const { caller, services } = request;
  const deliveryId = await queuePing(services.database.db, caller.accountId, id, newMessageId(), caller.now);
  if (deliveryId === undefined) throw new ApiError('itemNotFound');
  const deliveries = services.registry.get('deliveries')!;
  const items = await readByIds(services.database.db, deliveries, caller, [deliveryId], {
    fields: deliveries.defaultFields,
    expand: new Map(),
  });
  return { status: 200, body: { result: 'success', deliveries: items, metadata: NO_ITEMS } };
}

/**
 * `POST /webhooks/:id/rotateSecret`: a new secret, shown this once (`revealed`); the old one signs
 * for 24 h more. A replay of the same Idempotency-Key answers the webhook without it.
 */
export async function rotateSecret(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'rotateSecret');
  const { caller, services } = request;
  const webhooks = services.registry.get('webhooks')!;
  const secret = newSecret();
  const item = await services.writer.transact(caller, async (tx, changes) => {
    const previous = await currentSecret(tx, caller.accountId, id);
    if (previous === undefined) throw new ApiError('itemNotFound');
    await changes.touch(webhooks, [id]);
    await rotate(tx, caller.accountId, id, secret, previous, caller.now);
    await changes.settle();
    return changes.item(webhooks, id)!;
  });
  return {
    status: 200,
    body: { result: 'success', webhooks: [item], metadata: NO_ITEMS },
    revealed: { result: 'success', webhooks: [{ ...item, secret }], metadata: NO_ITEMS },
  };
}

export const webhookActionDocs: Record<string, ActionDoc> = {
  ping: {
    on: 'item',
    answers: 'deliveries',
    summary: 'Send a webhook.ping delivery now',
    description: 'Queues a `webhook.ping` delivery (data `{webhook: {id}}`), sent at once; answers the delivery.',
  },
  rotateSecret: {
    on: 'item',
    summary: 'Replace the signing secret',
    description:
      'Answers the webhook with its new `secret` (shown this once). For 24 h both secrets sign each delivery.',
  },
};
