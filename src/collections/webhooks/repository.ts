import type { Executor } from '../../db/runner.js';
import { dialectOf } from '../../db/runner.js';

/** The webhooks collection's own queries (its actions ask these; no SQL in the actions). */

/** For 24 h after a rotation, deliveries are signed with the old secret too. */
export const ROTATION_OVERLAP_MS = 86_400_000;

/**
 * Queues a `webhook.ping` delivery of the webhook, sent at once by the worker; its id, or undefined
 * when the account has no such webhook. One statement, from the webhook's row: where writers run
 * side by side (PostgreSQL, where no foreign key ties a delivery to its webhook: migration 016) the
 * row is locked, so a deletion running meanwhile waits and its trigger then takes this delivery too.
 */
export async function queuePing(
  db: Executor,
  accountId: number,
  id: number,
  msgId: string,
  now: number,
): Promise<number | undefined> {
  const row = await db
    .insertInto('deliveries')
    .columns([
      'account_id',
      'webhook_id',
      'event_id',
      'type',
      'msg_id',
      'state',
      'attempts',
      'next_attempt_at',
      'created',
      'modified',
    ])
    .expression((eb) =>
      eb
        .selectFrom('webhooks')
        .select((s) => [
          'account_id',
          'id',
          s.cast<null>(s.val(null), 'integer').as('event_id'),
          s.val('webhook.ping').as('type'),
          s.cast<string>(s.val(msgId), 'text').as('msg_id'),
          s.val('pending').as('state'),
          s.val(0).as('attempts'),
          s.cast<number>(s.val(now), 'bigint').as('next_attempt_at'),
          s.cast<number>(s.val(now), 'bigint').as('created'),
          s.cast<number>(s.val(now), 'bigint').as('modified'),
        ])
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .modifyEnd(dialectOf(db).lockClause('key share')),
    )
    .returning('id')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.id);
}

/** The webhook's current secret, or undefined when the account has no such webhook. */
export async function currentSecret(db: Executor, accountId: number, id: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .select('secret')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.secret;
}

/** Replaces the signing secret; the one it replaces keeps signing until ROTATION_OVERLAP_MS from now. */
export async function rotate(
  db: Executor,
  accountId: number,
  id: number,
  secret: string,
  previous: string,
  now: number,
) {
  await db
    .updateTable('webhooks')
    .set({ secret, previous_secret: previous, previous_secret_until: now + ROTATION_OVERLAP_MS, modified: now })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .execute();
}

/** A webhook as its deliveries are sent: its URL, its secrets, and since when it fails. */
export function webhookToSend(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('webhooks')
    .select(['id', 'account_id', 'url', 'secret', 'previous_secret', 'previous_secret_until', 'failing_since'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Since when a webhook's deliveries fail: set at its first failure after a success (`since`, and
 * only when unset), cleared by a success (null).
 */
export async function setFailingSince(db: Executor, accountId: number, id: number, since: number | null) {
  await db
    .updateTable('webhooks')
    .set({ failing_since: since })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .$if(since !== null, (q) => q.where('failing_since', 'is', null))
    .execute();
}

/** The server disables an active webhook (`gone`: its receiver answered 410; `failing`: nothing succeeded for days). */
export async function disableWebhook(db: Executor, accountId: number, id: number, reason: string, now: number) {
  await db
    .updateTable('webhooks')
    .set({ active: 0, disabled_reason: reason, modified: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('active', '=', 1)
    .execute();
}
