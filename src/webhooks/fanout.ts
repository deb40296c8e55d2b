import { sql } from 'kysely';
import type { Database } from '../db/index.js';
import { dialectOf, insertRows } from '../db/runner.js';
import { untyped, withTransaction, type Executor } from '../db/tx.js';
import { matches } from '../collections/events/record.js';
import { newMessageId } from '../collections/webhooks/sign.js';

/**
 * Deliveries of one webhook waiting for their first attempt, beyond which its later events wait as
 * events: a receiver that falls behind leaves its backlog in `events`, not as rows of the queue
 * every lease reads. Deliveries being retried do not count: a dead receiver's new events still get
 * their first attempt.
 */
export const WAITING_PER_WEBHOOK = 1000;
/** Events read per webhook and step (one statement each way). */
export const STEP = 500;

/** Whether a webhook's row says it receives (PostgreSQL: a boolean, SQLite: 0/1); its columns are unambiguous beside a cursor's. */
const RECEIVING = sql.raw('(active = 1 and deleted = 0 and disabled_reason is null)');

interface Behind {
  id: number;
  account_id: number;
  cursor: number | null;
}

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
  const db = database.db;
  // The webhooks whose account has events past their cursor (or that have no cursor yet).
  const behind: Behind[] = await db
    .selectFrom('webhooks as w')
    .leftJoin('webhook_cursors as c', (j) =>
      j.onRef('c.account_id', '=', 'w.account_id').onRef('c.webhook_id', '=', 'w.id'),
    )
    .select(['w.id', 'w.account_id', 'c.event_id as cursor'])
    .where(({ exists, selectFrom, fn, ref, lit }) =>
      exists(
        selectFrom('events as e')
          .select('e.id')
          .whereRef('e.account_id', '=', 'w.account_id')
          .where('e.id', '>', fn.coalesce(ref('c.event_id'), ref('w.events_after'), lit(0))),
      ),
    )
    .orderBy('w.id')
    .execute();
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
  const dialect = dialectOf(tx);
  if (w.cursor === null) {
    // Made once, where the create left the account's events; its own creation event, next, says
    // whether it receives. A row written outside the server (no events_after) starts at the last
    // event, receiving as its row says. PostgreSQL: from the webhook's row, locked, as a ping does
    // (src/collections/webhooks/actions.ts), so a deletion running meanwhile takes this row too.
    await sql`insert into webhook_cursors (account_id, webhook_id, event_id, live)
      select account_id, id, coalesce(events_after, (select max(e.id) from events e where e.account_id = webhooks.account_id), 0),
        case when events_after is null and ${RECEIVING} then 1 else 0 end
      from webhooks where account_id = ${w.account_id} and id = ${w.id}${dialect.lockClause('key share')}
      on conflict (account_id, webhook_id) do nothing`.execute(tx);
  }
  // The cursor's row, held to the commit: another process skips this webhook meanwhile, and a
  // deletion of the webhook waits (it deletes the cursor first), then deletes what this queued.
  const [hook] = (
    await sql<{ cursor: number; live: number; events: string; receiving: number | boolean }>`
    select c.event_id as cursor, c.live, w.events, ${RECEIVING} as receiving
    from webhook_cursors c join webhooks w on w.account_id = c.account_id and w.id = c.webhook_id
    where c.account_id = ${w.account_id} and c.webhook_id = ${w.id}${dialect.lockClause('update', { of: 'c', skipLocked: true })}`.execute(
      tx,
    )
  ).rows;
  if (!hook) return 0;
  // Read once the cursor is held (PostgreSQL: a new snapshot, with what another process queued).
  // `own`: the webhook's next change of its own, by a partial index (migration 017).
  const [ahead] = (
    await sql<{ waiting: number | string; own: number | null; last: number | null }>`select
    (select count(*) from (select 1 from deliveries d where d.account_id = ${w.account_id} and d.webhook_id = ${w.id}
      and d.state = 'pending' and d.attempts = 0 limit ${waitingPerWebhook}) q) as waiting,
    (select min(id) from events where account_id = ${w.account_id} and collection = 'webhooks' and item_id = ${w.id} and id > ${hook.cursor}) as own,
    (select max(id) from events where account_id = ${w.account_id}) as last`.execute(tx)
  ).rows;
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
  const room = receivingNow ? waitingPerWebhook - Number(ahead.waiting) : Infinity;
  const events = (
    await sql<{ id: number; type: string; data: string | null }>`
    select id, type, case when collection = 'webhooks' and item_id = ${w.id} then data end as data
    from events where account_id = ${w.account_id} and id > ${from} order by id limit ${size}`.execute(tx)
  ).rows;
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
  if (rows.length) await insertRows(untyped(tx), 'deliveries', rows);
  await tx
    .updateTable('webhook_cursors')
    .set({ event_id: last, live: live ? 1 : 0 })
    .where('account_id', '=', w.account_id)
    .where('webhook_id', '=', w.id)
    .execute();
  return rows.length;
}
