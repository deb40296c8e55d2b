import { sql } from 'kysely';
import type { Database } from '../db/index.js';
import { byKeys } from '../db/keys.js';
import { dialectOf } from '../db/runner.js';

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
