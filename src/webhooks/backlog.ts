import { sql } from 'kysely';
import type { Database } from '../db/index.js';

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
