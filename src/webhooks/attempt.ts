import type { Caller, Collection, Item } from '../collections/machinery/collection.js';
import type { Executor } from '../db/tx.js';
import type { Services } from '../collections/machinery/services.js';
import { present } from '../collections/machinery/present.js';
import type { Leased } from './lease.js';
import { sendDelivery, type Sent } from './send.js';
import { signedHeaders } from './sign.js';

/** A webhook none of whose deliveries succeeded for this long is disabled (`failing`). */
export const FAILING_AFTER_MS = 5 * 86_400_000;

/** The server acting on an account by itself: no user (actor null), no client. */
export const serverCaller = (services: Services, accountId: number, now: number): Caller => ({
  accountId, userId: 0, role: 'administrator', permissions: new Set(), clientId: '', now, publicUrl: services.config.publicUrl,
});

/** The body of one delivery: `{type, timestamp, data}`, data being the event item as /events shows it. */
async function payloadOf(services: Services, d: Leased, now: number): Promise<string | undefined> {
  if (d.event_id === null) return JSON.stringify({ type: d.type, timestamp: new Date(now).toISOString(), data: { webhook: { id: d.webhook_id } } });
  const events = services.registry.get('events')!;
  const row = await services.database.db.selectFrom('events').selectAll().where('id', '=', d.event_id).executeTakeFirst();
  if (!row) return undefined;
  const [item] = await present(services.database.db, events, serverCaller(services, d.account_id, now), { fields: events.defaultFields, expand: new Map() }, [row]);
  return JSON.stringify({ type: d.type, timestamp: item.occurred, data: item as Item });
}

/** One attempt of one leased delivery: send, then record what came of it. */
export async function attempt(services: Services, d: Leased, owner: string, clock: () => number): Promise<void> {
  const { database, config } = services;
  const hook = await database.db.selectFrom('webhooks').selectAll().where('id', '=', d.webhook_id).executeTakeFirst();
  if (!hook) return; // deleted meanwhile: its deliveries went with it
  const payload = await payloadOf(services, d, clock());
  let sent: Sent;
  if (payload === undefined) sent = { status: null, error: 'the event was purged' };
  else {
    const secrets = [hook.secret];
    if (hook.previous_secret && (hook.previous_secret_until ?? 0) > clock()) secrets.push(hook.previous_secret);
    // The signed timestamp is the real time of sending: receivers compare it with their clock.
    sent = await sendDelivery(hook.url, payload, signedHeaders(d.msg_id, new Date(), payload, secrets), config.webhooksAllowPrivateUrls);
  }
  await record(services, d, hook, sent, owner, clock(), payload === undefined);
}

async function record(services: Services, d: Leased, hook: { id: number; failing_since: number | null }, sent: Sent, owner: string, now: number, final: boolean): Promise<void> {
  const webhooks = services.registry.get('webhooks') as Collection;
  const ok = sent.status !== null && sent.status >= 200 && sent.status < 300;
  const gone = sent.status === 410;
  const delay = services.config.webhookRetrySchedule[d.attempts - 1];
  const retry = !ok && !gone && !final && delay !== undefined;
  const failing = !ok && hook.failing_since !== null && now - hook.failing_since >= FAILING_AFTER_MS;
  const disable = gone ? 'gone' : failing ? 'failing' : null;
  const outcome = async (tx: Executor) => {
    const updated = await tx.updateTable('deliveries').set({
      state: ok ? 'succeeded' : retry ? 'pending' : 'failed',
      last_status: sent.status,
      last_error: sent.error?.slice(0, 1000) ?? null,
      next_attempt_at: retry ? now + Math.max(delay, sent.retryAfterMs ?? 0) : now,
      lease_until: null,
      lease_owner: null,
      modified: now,
    }).where('id', '=', d.id).where('lease_owner', '=', owner).executeTakeFirst();
    // The lease was lost (a retry asked meanwhile, or it ran out): that outcome is not ours to record.
    return Number(updated.numUpdatedRows) > 0;
  };
  if (disable) {
    // Through the writer, so a webhook the server disables is an event like any other change.
    await services.writer.transact(serverCaller(services, d.account_id, now), async (tx, changes) => {
      if (!(await outcome(tx))) return;
      await changes.touch(webhooks, [hook.id]);
      await tx.updateTable('webhooks').set({ active: 0, disabled_reason: disable, modified: now }).where('id', '=', hook.id).execute();
    });
    return;
  }
  // The common case is one statement, no transaction: a success, or a failure to retry.
  const db = services.database.db;
  if (!(await outcome(db))) return;
  if (ok && hook.failing_since !== null) await db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', hook.id).execute();
  if (!ok && hook.failing_since === null) {
    await db.updateTable('webhooks').set({ failing_since: now }).where('id', '=', hook.id).where('failing_since', 'is', null).execute();
  }
}
