import type { Database } from '../../db/index.js';
import { byKeys } from '../../db/keys.js';

/**
 * Deletes events and finished deliveries older than `days`, a small batch per statement so no
 * lock is held for long and writers interleave; `keepGoing` false stops between batches (shutdown).
 * Returns how many rows of each went.
 */
export async function purgeEvents(
  database: Database,
  now: number,
  days: number,
  batch = 500,
  keepGoing: () => boolean = () => true,
): Promise<{ events: number; deliveries: number }> {
  const cutoff = now - days * 86_400_000;
  const db = database.db;
  let deliveries = 0;
  let events = 0;
  for (;;) {
    const rows = await db
      .selectFrom('deliveries')
      .select(['account_id', 'id'])
      .where('state', '!=', 'pending')
      .where('modified', '<', cutoff)
      .limit(batch)
      .execute();
    if (!rows.length || !keepGoing()) break;
    deliveries += Number((await db.deleteFrom('deliveries').where(byKeys(rows)).executeTakeFirst()).numDeletedRows);
  }
  for (;;) {
    // An event still being delivered stays until its deliveries are done (its own purge follows),
    // and one a webhook has yet to reach (past its cursor, src/collections/webhooks/deliveries/fanout.ts) until it has.
    const rows = await db
      .selectFrom('events')
      .select(['account_id', 'id'])
      .where('occurred', '<', cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('deliveries')
              .select('deliveries.id')
              .whereRef('deliveries.event_id', '=', 'events.id')
              .where('deliveries.state', '=', 'pending'),
          ),
        ),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_cursors')
              .select('webhook_cursors.webhook_id')
              .whereRef('webhook_cursors.account_id', '=', 'events.account_id')
              .whereRef('webhook_cursors.event_id', '<', 'events.id'),
          ),
        ),
      )
      .limit(batch)
      .execute();
    if (!rows.length || !keepGoing()) break;
    events += Number((await db.deleteFrom('events').where(byKeys(rows)).executeTakeFirst()).numDeletedRows);
  }
  return { events, deliveries };
}
