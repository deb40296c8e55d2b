import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { readByIds } from '../machinery/read.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { ApiError } from '../../errors.js';
import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';
import { newMessageId, newSecret } from './sign.js';

/** For 24 h after a rotation, deliveries are signed with the old secret too. */
const ROTATION_OVERLAP_MS = 86_400_000;

const itemOf = (request: ActionRequest, name: string): number => {
  if (request.item === undefined)
    throw new ApiError('unknownAction', `'${name}' applies to one webhook: POST /webhooks/:id/${name}`);
  return request.item;
};

async function existing(db: Executor, accountId: number, id: number) {
  const row = await db
    .selectFrom('webhooks')
    .select(['id', 'secret'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new ApiError('itemNotFound');
  return row;
}

/** `POST /webhooks/:id/ping`: queues a `webhook.ping` delivery, sent at once by the worker. */
export async function ping(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'ping');
  const { caller, services } = request;
  const now = caller.now;
  // One statement, from the webhook's row: where writers run side by side (PostgreSQL, where no
  // foreign key ties a delivery to its webhook: migration 016), the row is locked, so a deletion running meanwhile waits and its
  // trigger then takes this delivery too. No row: no such webhook.
  const lock = services.database.dialect.lockClause('key share');
  const { rows } = await sql<{
    id: number;
  }>`insert into deliveries (account_id, webhook_id, event_id, type, msg_id, state, attempts, next_attempt_at, created, modified)
    select account_id, id, null, 'webhook.ping', cast(${newMessageId()} as text), 'pending', 0, cast(${now} as bigint), cast(${now} as bigint), cast(${now} as bigint)
    from webhooks where account_id = ${caller.accountId} and id = ${id}${lock} returning id`.execute(
    services.database.db,
  );
  if (!rows.length) throw new ApiError('itemNotFound');
  const deliveryId = Number(rows[0].id);
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
    const row = await existing(tx, caller.accountId, id);
    await changes.touch(webhooks, [id]);
    await tx
      .updateTable('webhooks')
      .set({
        secret,
        previous_secret: row.secret,
        previous_secret_until: caller.now + ROTATION_OVERLAP_MS,
        modified: caller.now,
      })
      .where('id', '=', id)
      .where('account_id', '=', caller.accountId)
      .execute();
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
