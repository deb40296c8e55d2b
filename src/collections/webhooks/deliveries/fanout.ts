import type { Database } from '../../../db/index.js';
import { withTransaction, type Executor } from '../../../db/tx.js';
import { newMessageId } from '../sign.js';
import {
  aheadOf,
  eventsPastCursor,
  holdCursor,
  openCursor,
  queueAndMove,
  webhooksBehind,
  type Behind,
} from './repository.js';

/**
 * Deliveries of one webhook waiting for their first attempt, beyond which its later events wait as
 * events: a receiver that falls behind leaves its backlog in `events`, not as rows of the queue
 * every lease reads. Deliveries being retried do not count: a dead receiver's new events still get
 * their first attempt.
 */
export const WAITING_PER_WEBHOOK = 1000;
/** Events read per webhook and step (one statement each way). */
export const STEP = 500;

export interface FanOutOptions {
  waitingPerWebhook?: number;
  /** Events read per webhook (STEP): fewer while requests keep the process busy. */
  step?: number;
  /** Told of each webhook's step: its error, or undefined once it went through. */
  onStep?: (webhookId: number, err?: Error) => void;
}

/**
 * Queues the deliveries of the events committed since each webhook's cursor (migration 017), a
 * step per webhook, each its own transaction: called by the delivery worker before each lease, in
 * every process. A step that fails (reported to `onStep`) holds up only its webhook. Answers how
 * many deliveries it queued.
 */
export async function fanOut(database: Database, now: number, opts: FanOutOptions = {}): Promise<number> {
  const behind = await webhooksBehind(database.db);
  let queued = 0;
  for (const w of behind) {
    try {
      queued += await withTransaction(database, (tx) =>
        step(tx, w, now, opts.waitingPerWebhook ?? WAITING_PER_WEBHOOK, opts.step ?? STEP),
      );
      opts.onStep?.(w.id);
    } catch (err) {
      opts.onStep?.(w.id, err as Error);
    }
  }
  return queued;
}

/** Whether a webhook's patterns ('*', '<collection>.*' or an exact type) take an event type. */
function matches(patterns: readonly string[], type: string): boolean {
  const collection = type.slice(0, type.indexOf('.'));
  return patterns.some((p) => p === '*' || p === type || p === `${collection}.*`);
}

/**
 * Whether a webhook receives events after this event of its own (`data`, the webhook as the
 * change left it): active, not deleted, not disabled by the server.
 */
function receiving(type: string, data: string): boolean {
  if (type.endsWith('.deleted')) return false;
  const hook = JSON.parse(data) as { active?: boolean; deleted?: boolean; disabledReason?: string | null };
  return hook.active === true && hook.deleted !== true && (hook.disabledReason ?? null) === null;
}

/**
 * One webhook: the next events after its cursor, their deliveries queued, the cursor moved past
 * them. Whether the webhook receives an event is decided as of that event: the webhook's own
 * changes are events of the same account (its creation, a pause, the server disabling it), read in
 * the same order, so an event committed while it was active is queued even when the worker reads
 * it after a pause, and one committed while it was paused never is (its own pausing event
 * included: the change applies first, as it did when deliveries were queued at the commit).
 */
async function step(tx: Executor, w: Behind, now: number, waitingPerWebhook: number, size: number): Promise<number> {
  if (w.cursor === null) await openCursor(tx, w);
  const hook = await holdCursor(tx, w);
  if (!hook) return 0;
  // Read once the cursor is held (PostgreSQL: a new snapshot, with what another process queued).
  const ahead = await aheadOf(tx, w, hook.cursor, waitingPerWebhook);
  const receivingNow = Number(hook.receiving) === 1 || hook.receiving === true;
  // With no change of its own ahead, its row says how it stands: the same as the events say,
  // unless the row was changed by SQL outside the server, which records no event.
  let live = ahead.own === null ? receivingNow : Number(hook.live) === 1;
  let from = hook.cursor;
  if (!live) {
    // Not receiving: nothing before its next change of its own is queued, so the cursor jumps
    // there (or to the account's last event), however many events the pause let by.
    from = Math.max(from, ahead.own === null ? Number(ahead.last ?? from) : Number(ahead.own) - 1);
  }
  // Room for deliveries while it receives now (its waiting ones are being sent); paused or
  // disabled since, the cursor walks on to that change, queueing what came before it.
  const room = receivingNow ? waitingPerWebhook - ahead.waiting : Infinity;
  const events = await eventsPastCursor(tx, w, from, size);
  const patterns = JSON.parse(hook.events) as string[];
  let last = from;
  const rows = [];
  for (const e of events) {
    const after = e.data === null ? live : receiving(e.type, e.data);
    if (after && matches(patterns, e.type)) {
      if (rows.length >= room) break;
      rows.push({
        account_id: w.account_id,
        webhook_id: w.id,
        event_id: e.id,
        type: e.type,
        msg_id: newMessageId(),
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        created: now,
        modified: now,
      });
    }
    live = after;
    last = e.id;
  }
  if (last === hook.cursor) return 0;
  await queueAndMove(tx, w, rows, last, live);
  return rows.length;
}
