import type { Database } from '../db/index.js';
import { byKeys } from '../db/keys.js';
import { dialectOf } from '../db/runner.js';
import { ATTEMPT_MS } from './transport.js';

/** A process holds a message this long while it sends it; after a crash the lease runs out and another takes it. */
export const LEASE_MS = ATTEMPT_MS + 10_000;

export interface LeasedMessage {
  id: number;
  account_id: number;
  to_address: string;
  subject: string;
  body: string;
  client_id: number | null;
  message_id: string;
  attempts: number;
}

/**
 * Takes up to `limit` queued messages that are due, in every account, for this process: one
 * conditional UPDATE (on PostgreSQL over rows locked FOR UPDATE SKIP LOCKED, on SQLite under its one
 * write lock), so two processes never hold the same attempt. Read through `messages_due`.
 */
export async function leaseMessages(
  database: Database,
  owner: string,
  now: number,
  limit: number,
): Promise<LeasedMessage[]> {
  const db = database.db;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const due = (eb: any) =>
    eb.and([
      eb('state', '=', 'queued'),
      eb('next_attempt_at', '<=', now),
      eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]),
    ]);
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'account_id'])
    .where(due)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  if (!rows.length) return [];
  const contended = !dialectOf(db).serialWriters;
  return db
    .updateTable('messages')
    .set({ lease_until: now + LEASE_MS, lease_owner: owner })
    .where(byKeys(rows))
    .$if(contended, (q) =>
      q.where(
        'id',
        'in',
        db.selectFrom('messages').select('id').where(byKeys(rows)).where(due).forUpdate().skipLocked(),
      ),
    )
    .where(due)
    .returning(['id', 'account_id', 'to_address', 'subject', 'body', 'client_id', 'message_id', 'attempts'])
    .execute();
}
