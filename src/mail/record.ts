import type { Collection } from '../collections/machinery/collection.js';
import type { Services } from '../collections/machinery/services.js';
import type { Executor } from '../db/tx.js';
import { serverCaller } from '../collections/machinery/server-caller.js';
import type { LeasedMessage } from './lease.js';
import type { Attempt } from './transport.js';

/** What one attempt makes of a message: sent, queued again after the schedule's next delay, or failed. */
export interface Outcome {
  message: LeasedMessage;
  attempt: Attempt;
}

/**
 * Records the outcomes of one account's attempts in one transaction of the writer, so each change
 * of a message (sent, retried, failed) is an event like any other (actor null). Only rows this
 * process still leases are written: a lease that ran out belongs to whoever took it next.
 */
export async function recordOutcomes(services: Services, owner: string, now: number, outcomes: Outcome[]) {
  if (!outcomes.length) return;
  const accountId = outcomes[0].message.account_id;
  const messages = services.registry.get('messages') as Collection;
  const schedule = services.config.mailRetrySchedule;
  await services.writer.transact(serverCaller(services, accountId, now), async (tx: Executor, changes) => {
    const held = await tx
      .selectFrom('messages')
      .select('id')
      .where('account_id', '=', accountId)
      .where(
        'id',
        'in',
        outcomes.map((o) => o.message.id),
      )
      .where('lease_owner', '=', owner)
      .execute();
    const ours = new Set(held.map((r) => r.id));
    const mine = outcomes.filter((o) => ours.has(o.message.id));
    if (!mine.length) return;
    await changes.touch(
      messages,
      mine.map((o) => o.message.id),
    );
    const sent = mine.filter((o) => o.attempt.ok).map((o) => o.message.id);
    if (sent.length)
      await tx
        .updateTable('messages')
        .set((eb) => ({
          state: 'sent',
          attempts: eb('attempts', '+', 1),
          sent_at: now,
          last_error: null,
          lease_until: null,
          lease_owner: null,
          modified: now,
        }))
        .where('account_id', '=', accountId)
        .where('id', 'in', sent)
        .execute();
    for (const { message, attempt } of mine) {
      if (attempt.ok) continue;
      const attempts = message.attempts + 1;
      const delay = attempt.permanent ? undefined : schedule[attempts - 1];
      await tx
        .updateTable('messages')
        .set({
          state: delay === undefined ? 'failed' : 'queued',
          attempts,
          last_error: attempt.error,
          next_attempt_at: delay === undefined ? now : now + delay,
          lease_until: null,
          lease_owner: null,
          modified: now,
        })
        .where('account_id', '=', accountId)
        .where('id', '=', message.id)
        .execute();
    }
  });
}

/** A message found opted out when its turn came (the client opted out after it was queued). */
export const optedOutAttempt: Attempt = { ok: false, permanent: true, error: 'opted out' };
