import { sql } from 'kysely';
import { dialectOf, eventsRecorded, insertRows, query, slot, type Executor } from '../../db/runner.js';
import type { Caller, Collection, Item } from '../machinery/collection.js';
import type { Change, ChangeHook } from '../machinery/write/index.js';
import { followsJob } from '../policy.js';

const CHUNK = 200;

/**
 * What an event may show of an item: its default fields without the computed ones (a file's
 * `downloadUrl` is a signed credential). Write-only fields (passwords, webhook secrets) are never
 * among the default fields.
 */
export function publicData(c: Collection, item: Item): Item {
  const out: Item = {};
  for (const [k, v] of Object.entries(item)) if (k === 'id' || c.fields[k]?.kind !== 'computed') out[k] = v;
  return out;
}

/** The id of an association `{id}` of an item, or null. */
function assocId(item: Item | null, field: string): number | null {
  const v = item?.[field] as { id?: unknown } | null | undefined;
  return v && typeof v === 'object' && typeof v.id === 'number' ? v.id : null;
}

/**
 * What a Contractor's visibility of the event needs (PRODUCT §13, src/collections/policy.ts,
 * migration 081): the job the item belongs to (a job's own id, else its `job` association), and its
 * `user` after and before the change (a visit's assignee).
 */
function scope(ch: Change) {
  const item = ch.after ?? ch.before;
  const isJob = ch.collection.name === 'jobs';
  const hasJob = !isJob && followsJob(ch.collection);
  const hasUser = ch.collection.fields.user?.kind === 'assoc';
  return {
    scope_job_id: isJob ? ch.id : hasJob ? assocId(item, 'job') : null,
    scope_user_id: hasUser ? assocId(ch.after, 'user') : null,
    scope_old_user_id: hasUser ? assocId(ch.before, 'user') : null,
  };
}

/**
 * Where writers run side by side (PostgreSQL), the events are staged as one row, and written at the
 * commit by the database itself (migration 014): under the account's events lock, held only while
 * the database commits, so event ids become visible in increasing order per account
 * (docs/events.md) and no writer waits on another's round trips.
 */
async function stageEvents(tx: Executor, caller: Caller, rows: object[]): Promise<void> {
  await query(
    tx,
    'stageEvents',
    () =>
      sql`insert into event_batches (account_id, events, now)
      values (${slot<number>('account')}, ${slot('events')}::jsonb, ${slot<number>('now')})`.compile(tx),
    { account: caller.accountId, events: JSON.stringify(rows), now: caller.now },
  );
}

/**
 * The change hook: one `events` row per change. Where writers are serial (SQLite's BEGIN
 * IMMEDIATE), ids drawn now are in commit order already. Deliveries are queued after the commit,
 * by the delivery worker (src/collections/webhooks/deliveries/fanout.ts).
 */
export const recordEvents: ChangeHook = async (tx, caller, changes) => {
  const recorded = changes.filter((ch) => ch.collection.recorded !== false);
  if (!recorded.length) return;
  const rows = recorded.map((ch: Change) => ({
    account_id: caller.accountId,
    type: `${ch.collection.name}.${ch.type}`,
    collection: ch.collection.name,
    item_id: ch.id,
    changes: ch.changes ? JSON.stringify(ch.changes) : null,
    data: JSON.stringify(publicData(ch.collection, (ch.after ?? ch.before)!)),
    // userId 0 is the operator (CLI, seeds); '' no OAuth client.
    actor_id: caller.userId || null,
    client_id: caller.clientId || null,
    occurred: caller.now,
    ...scope(ch),
  }));
  eventsRecorded(tx, caller.accountId);
  if (!dialectOf(tx).serialWriters) return stageEvents(tx, caller, rows);
  for (let i = 0; i < rows.length; i += CHUNK) await insertRows(tx, 'events', rows.slice(i, i + CHUNK));
};
