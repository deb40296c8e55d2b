import { sql } from 'kysely';
import type { Database } from '../../../db/index.js';
import { byKeys } from '../../../db/keys.js';
import { dialectOf, insertRows } from '../../../db/runner.js';
import { untyped, type Executor } from '../../../db/tx.js';

/**
 * The delivery queue's statements (the deliveries, the webhooks' cursors, and the events they
 * read), for the collection's retry action, the worker's lease and fan-out, and /metrics' gauges.
 * No other file of the worker holds a query.
 */

/** A delivery due again now, whatever its state: whether the account has it. */
export async function queueAgain(db: Executor, accountId: number, id: number, now: number): Promise<boolean> {
  const done = await db
    .updateTable('deliveries')
    .set({ state: 'pending', next_attempt_at: now, lease_until: null, lease_owner: null, modified: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

/** How long a process holds a delivery it is sending (the 10 s send timeout and a margin); after a crash it runs out. */
export const LEASE_MS = 20_000;

export interface Leased {
  id: number;
  account_id: number;
  webhook_id: number;
  event_id: number | null;
  type: string;
  msg_id: string;
  attempts: number;
}

/**
 * Takes up to `limit` due deliveries for this process, at most `perWebhook` in flight per
 * webhook (counting `busy`, what it already sends), so one slow receiver cannot take every slot.
 * The lease is one conditional UPDATE: on PostgreSQL over rows locked FOR UPDATE SKIP LOCKED, on
 * SQLite under its single write lock; either way two processes never lease the same attempt.
 */
export async function leaseDue(
  database: Database,
  owner: string,
  now: number,
  limit: number,
  perWebhook: number,
  busy: Map<number, number>,
): Promise<Leased[]> {
  const db = database.db;
  const saturated = [...busy].filter(([, n]) => n >= perWebhook).map(([id]) => id);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const due = (eb: any) =>
    eb.and([
      eb('deliveries.state', '=', 'pending'),
      eb('deliveries.next_attempt_at', '<=', now),
      eb.or([eb('deliveries.lease_until', 'is', null), eb('deliveries.lease_until', '<', now)]),
    ]);
  let candidates = db
    .selectFrom('deliveries')
    .innerJoin('webhooks', (j) =>
      j.onRef('webhooks.account_id', '=', 'deliveries.account_id').onRef('webhooks.id', '=', 'deliveries.webhook_id'),
    )
    .select(['deliveries.id', 'deliveries.account_id', 'deliveries.webhook_id'])
    .where(due)
    // A paused or disabled webhook's deliveries wait (a ping is sent regardless).
    .where((eb) =>
      eb.or([
        eb.and([
          eb('webhooks.active', '=', 1),
          eb('webhooks.deleted', '=', 0),
          eb('webhooks.disabled_reason', 'is', null),
        ]),
        eb('deliveries.type', '=', 'webhook.ping'),
      ]),
    );
  if (saturated.length) candidates = candidates.where('deliveries.webhook_id', 'not in', saturated);
  const rows = await candidates
    .orderBy('deliveries.next_attempt_at')
    .orderBy('deliveries.id')
    .limit(limit * 4)
    .execute();
  const taken = new Map(busy);
  const taking: typeof rows = [];
  for (const r of rows) {
    if (taking.length >= limit) break;
    const n = taken.get(r.webhook_id) ?? 0;
    if (n >= perWebhook) continue;
    taken.set(r.webhook_id, n + 1);
    taking.push(r);
  }
  if (!taking.length) return [];
  // Where other processes lease at the same time (PostgreSQL), rows one of them holds are left to it.
  const contended = !dialectOf(db).serialWriters;
  return db
    .updateTable('deliveries')
    .set({ lease_until: now + LEASE_MS, lease_owner: owner, attempts: sql`attempts + 1`, modified: now })
    .where(byKeys(taking))
    .$if(contended, (q) =>
      q.where(
        'id',
        'in',
        db.selectFrom('deliveries').select('id').where(byKeys(taking)).where(due).forUpdate().skipLocked(),
      ),
    )
    .where(due)
    .returning(['id', 'account_id', 'webhook_id', 'event_id', 'type', 'msg_id', 'attempts'])
    .execute();
}

export interface Backlog {
  /** Deliveries waiting for their first attempt. */
  waiting: number;
  /** When the oldest of them was queued (epoch ms), or null when none waits. */
  oldest: number | null;
}

/**
 * The deliveries waiting for a first attempt that the worker is to send (their webhook receives,
 * or a ping: a paused or disabled webhook's wait on purpose), in every account: an operator's
 * gauge (`/metrics`), a count and an age, nothing of any account's data. Read through the partial
 * index `deliveries_waiting` (migration 017; the literals match its predicate): about 1,000 rows
 * per receiving webhook at most, however long the history of sent ones.
 */
export async function backlog(database: Database): Promise<Backlog> {
  // SQLite's planner prefers deliveries_due (state =), every pending delivery retries included,
  // even with statistics; PostgreSQL picks the partial index by itself.
  const index = database.dialect.indexHint('deliveries_waiting');
  const { rows } = await sql<{ waiting: number | string; oldest: number | string | null }>`select
    count(*) as waiting, min(d.created) as oldest
    from deliveries d ${index} join webhooks w on w.id = d.webhook_id
    where d.state = 'pending' and d.attempts = 0
      and ((w.active = 1 and w.deleted = 0 and w.disabled_reason is null) or d.type = 'webhook.ping')`.execute(
    database.db,
  );
  const r = rows[0];
  return { waiting: Number(r?.waiting ?? 0), oldest: r?.oldest == null ? null : Number(r.oldest) };
}

/** The account's events of these ids, as stored (a delivery's payload is the event as /events shows it). */
export function eventRows(db: Executor, accountId: number, ids: number[]) {
  return ids.length
    ? db.selectFrom('events').selectAll().where('id', 'in', ids).where('account_id', '=', accountId).execute()
    : Promise.resolve([]);
}

/** The outcome of one attempt of a leased delivery, as its row keeps it. */
export interface Outcome {
  state: 'pending' | 'succeeded' | 'failed';
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number;
}

/**
 * Records the outcome of attempts of the account's deliveries that this process (`owner`) still
 * leases; a lease lost meanwhile (a retry asked, or it ran out) is not ours to record. Answers
 * whether any row took it.
 */
export async function recordOutcome(
  db: Executor,
  accountId: number,
  ids: number[],
  owner: string,
  outcome: Outcome,
  now: number,
): Promise<boolean> {
  const updated = await db
    .updateTable('deliveries')
    .set({ ...outcome, lease_until: null, lease_owner: null, modified: now })
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Whether a webhook's row says it receives (PostgreSQL: a boolean, SQLite: 0/1); its columns are unambiguous beside a cursor's. */
const RECEIVING = sql.raw('(active = 1 and deleted = 0 and disabled_reason is null)');

/** A webhook whose account has events past its cursor. */
export interface Behind {
  id: number;
  account_id: number;
  cursor: number | null;
}

/** The webhooks whose account has events past their cursor (or that have no cursor yet). */
export function webhooksBehind(db: Executor): Promise<Behind[]> {
  return db
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
}

/**
 * Makes a webhook's cursor, once, where the create left the account's events; its own creation
 * event, next, says whether it receives. A row written outside the server (no events_after) starts
 * at the last event, receiving as its row says. PostgreSQL: from the webhook's row, locked, as a
 * ping does (queuePing), so a deletion running meanwhile takes this row too.
 */
export async function openCursor(tx: Executor, w: Behind): Promise<void> {
  await sql`insert into webhook_cursors (account_id, webhook_id, event_id, live)
    select account_id, id, coalesce(events_after, (select max(e.id) from events e where e.account_id = webhooks.account_id), 0),
      case when events_after is null and ${RECEIVING} then 1 else 0 end
    from webhooks where account_id = ${w.account_id} and id = ${w.id}${dialectOf(tx).lockClause('key share')}
    on conflict (account_id, webhook_id) do nothing`.execute(tx);
}

/**
 * The cursor's row, held to the commit: another process skips this webhook meanwhile, and a
 * deletion of the webhook waits (it deletes the cursor first), then deletes what this queued.
 * Undefined when another process holds it (or the webhook is gone).
 */
export async function holdCursor(tx: Executor, w: Behind) {
  const { rows } = await sql<{ cursor: number; live: number; events: string; receiving: number | boolean }>`
    select c.event_id as cursor, c.live, w.events, ${RECEIVING} as receiving
    from webhook_cursors c join webhooks w on w.account_id = c.account_id and w.id = c.webhook_id
    where c.account_id = ${w.account_id} and c.webhook_id = ${w.id}${dialectOf(tx).lockClause('update', { of: 'c', skipLocked: true })}`.execute(
    tx,
  );
  return rows[0];
}

/**
 * What lies ahead of a held cursor: how many of the webhook's deliveries wait for a first attempt
 * (counted up to `limit`), its next change of its own (`own`, by a partial index: migration 017),
 * and the account's last event.
 */
export async function aheadOf(tx: Executor, w: Behind, cursor: number, limit: number) {
  const { rows } = await sql<{ waiting: number | string; own: number | null; last: number | null }>`select
    (select count(*) from (select 1 from deliveries d where d.account_id = ${w.account_id} and d.webhook_id = ${w.id}
      and d.state = 'pending' and d.attempts = 0 limit ${limit}) q) as waiting,
    (select min(id) from events where account_id = ${w.account_id} and collection = 'webhooks' and item_id = ${w.id} and id > ${cursor}) as own,
    (select max(id) from events where account_id = ${w.account_id}) as last`.execute(tx);
  return { waiting: Number(rows[0].waiting), own: rows[0].own, last: rows[0].last };
}

/** The account's next `size` events after `from`, with the data of the webhook's own changes only. */
export async function eventsPastCursor(tx: Executor, w: Behind, from: number, size: number) {
  const { rows } = await sql<{ id: number; type: string; data: string | null }>`
    select id, type, case when collection = 'webhooks' and item_id = ${w.id} then data end as data
    from events where account_id = ${w.account_id} and id > ${from} order by id limit ${size}`.execute(tx);
  return rows;
}

/** Queues deliveries of a webhook's events and moves its cursor past them. */
export async function queueAndMove(
  tx: Executor,
  w: Behind,
  rows: Record<string, unknown>[],
  cursor: number,
  live: boolean,
): Promise<void> {
  if (rows.length) await insertRows(untyped(tx), 'deliveries', rows);
  await tx
    .updateTable('webhook_cursors')
    .set({ event_id: cursor, live: live ? 1 : 0 })
    .where('account_id', '=', w.account_id)
    .where('webhook_id', '=', w.id)
    .execute();
}
