import type { Collection, Item } from '../../machinery/collection.js';
import type { Executor } from '../../../db/tx.js';
import type { Services } from '../../machinery/services.js';
import { present } from '../../machinery/present.js';
import { serverCaller } from '../../machinery/server-caller.js';
import { disableWebhook, setFailingSince, webhookToSend } from '../repository.js';
import { signedHeaders } from '../sign.js';
import { eventRows, recordOutcome, type Leased } from './repository.js';
import { sendDelivery, type Sent } from './send.js';

/** A webhook none of whose deliveries succeeded for this long is disabled (`failing`). */
export const FAILING_AFTER_MS = 5 * 86_400_000;

/**
 * The bodies of a webhook's leased deliveries, `{type, timestamp, data}` with data the event item
 * as /events shows it: the events are read and presented in one go. Undefined for a purged event.
 */
async function payloadsOf(
  services: Services,
  accountId: number,
  ds: Leased[],
  now: number,
): Promise<(string | undefined)[]> {
  const events = services.registry.get('events')!;
  const ids = ds.flatMap((d) => (d.event_id === null ? [] : [d.event_id]));
  const rows = await eventRows(services.database.db, accountId, ids);
  const items = await present(
    services.database.db,
    events,
    serverCaller(services, accountId, now),
    { fields: events.defaultFields, expand: new Map() },
    rows,
  );
  const byId = new Map(items.map((it) => [it.id as number, it]));
  return ds.map((d) => {
    if (d.event_id === null)
      return JSON.stringify({
        type: d.type,
        timestamp: new Date(now).toISOString(),
        data: { webhook: { id: d.webhook_id } },
      });
    const item = byId.get(d.event_id);
    return item && JSON.stringify({ type: d.type, timestamp: item.occurred, data: item as Item });
  });
}

/**
 * One attempt of each of a webhook's leased deliveries: sent side by side, then their outcomes
 * recorded, the common case (a success) in one statement for the lot.
 */
export async function attemptAll(services: Services, ds: Leased[], owner: string, clock: () => number): Promise<void> {
  if (!ds.length) return;
  const { database, config } = services;
  const hook = await webhookToSend(database.db, ds[0].account_id, ds[0].webhook_id);
  if (!hook) return; // deleted meanwhile: its deliveries went with it
  const payloads = await payloadsOf(services, ds[0].account_id, ds, clock());
  const secrets = [hook.secret];
  if (hook.previous_secret && (hook.previous_secret_until ?? 0) > clock()) secrets.push(hook.previous_secret);
  const sent = await Promise.all(
    ds.map(async (d, i): Promise<Sent> => {
      const payload = payloads[i];
      if (payload === undefined) return { status: null, error: 'the event was purged', failure: 'purged' };
      // The signed timestamp is the real time of sending: receivers compare it with their clock.
      return sendDelivery(
        hook.url,
        payload,
        signedHeaders(d.msg_id, new Date(), payload, secrets),
        config.webhooksAllowPrivateUrls,
      );
    }),
  );
  for (const s of sent) for (const observe of observers) observe(outcomeOf(s));
  await record(
    services,
    ds,
    hook,
    sent,
    owner,
    clock(),
    payloads.map((p) => p === undefined),
  );
}

/** What became of a webhook delivery attempt. */
export const DELIVERY_OUTCOMES = ['succeeded', 'failed', 'gone', 'refused', 'timeout', 'network', 'purged'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** Told of every attempt's outcome (src/http/metrics.ts counts them for /metrics). */
const observers = new Set<(outcome: DeliveryOutcome) => void>();
export const observeDeliveryAttempts = (fn: (outcome: DeliveryOutcome) => void): void => void observers.add(fn);

/** An attempt's outcome as /metrics counts it. */
function outcomeOf(s: Sent): DeliveryOutcome {
  if (s.status === null) return s.failure ?? 'network';
  if (s.status >= 200 && s.status < 300) return 'succeeded';
  return s.status === 410 ? 'gone' : 'failed';
}

type Hook = { id: number; account_id: number; failing_since: number | null };

async function record(
  services: Services,
  ds: Leased[],
  hook: Hook,
  sent: Sent[],
  owner: string,
  now: number,
  final: boolean[],
): Promise<void> {
  const db = services.database.db;
  const ok = (s: Sent) => s.status !== null && s.status >= 200 && s.status < 300;
  // Successes: one statement per status answered (usually one), no transaction.
  const succeeded = new Map<number, number[]>();
  ds.forEach((d, i) => {
    const status = sent[i].status;
    if (status !== null && ok(sent[i])) succeeded.set(status, [...(succeeded.get(status) ?? []), d.id]);
  });
  for (const [status, ids] of succeeded) {
    await recordOutcome(
      db,
      hook.account_id,
      ids,
      owner,
      { state: 'succeeded', last_status: status, last_error: null, next_attempt_at: now },
      now,
    );
  }
  if (succeeded.size && hook.failing_since !== null) await setFailingSince(db, hook.account_id, hook.id, null);
  for (let i = 0; i < ds.length; i++)
    if (!ok(sent[i])) await recordFailure(services, ds[i], hook, sent[i], owner, now, final[i], succeeded.size > 0);
}

async function recordFailure(
  services: Services,
  d: Leased,
  hook: Hook,
  sent: Sent,
  owner: string,
  now: number,
  final: boolean,
  someSucceeded: boolean,
): Promise<void> {
  const webhooks = services.registry.get('webhooks') as Collection;
  const gone = sent.status === 410;
  const schedule = services.config.webhookRetrySchedule;
  const delay = schedule[d.attempts - 1];
  // A receiver's Retry-After is honoured up to the schedule's longest step: a number of seconds or
  // a date millennia ahead must neither park the delivery forever nor overflow the column.
  const asked = Math.min(sent.retryAfterMs ?? 0, Math.max(...schedule));
  const retry = !gone && !final && delay !== undefined;
  const failing = !someSucceeded && hook.failing_since !== null && now - hook.failing_since >= FAILING_AFTER_MS;
  const disable = gone ? 'gone' : failing ? 'failing' : null;
  const outcome = (tx: Executor) =>
    recordOutcome(
      tx,
      d.account_id,
      [d.id],
      owner,
      {
        state: retry ? 'pending' : 'failed',
        last_status: sent.status,
        last_error: sent.error?.slice(0, 1000) ?? null,
        next_attempt_at: retry ? now + Math.max(delay, asked) : now,
      },
      now,
    );
  if (disable) {
    // Through the writer, so a webhook the server disables is an event like any other change.
    await services.writer.transact(serverCaller(services, d.account_id, now), async (tx, changes) => {
      if (!(await outcome(tx))) return;
      await changes.touch(webhooks, [hook.id]);
      await disableWebhook(tx, hook.account_id, hook.id, disable, now);
    });
    return;
  }
  const db = services.database.db;
  if (!(await outcome(db))) return;
  if (!someSucceeded && hook.failing_since === null) await setFailingSince(db, hook.account_id, hook.id, now);
}
