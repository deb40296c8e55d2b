import type { Database } from '../../db/index.js';
import { byKeys } from '../../db/keys.js';

/**
 * Deletes location pings recorded more than `days` ago, a small batch per statement (as events
 * are purged: src/collections/events/retention.ts); `keepGoing` false stops between batches.
 * Returns how many went.
 */
export async function purgeLocations(
  database: Database,
  now: number,
  days: number,
  batch = 500,
  keepGoing: () => boolean = () => true,
): Promise<number> {
  const cutoff = now - days * 86_400_000;
  const db = database.db;
  let deleted = 0;
  for (;;) {
    const rows = await db
      .selectFrom('locations')
      .select(['account_id', 'id'])
      .where('recorded_at', '<', cutoff)
      .limit(batch)
      .execute();
    if (!rows.length || !keepGoing()) break;
    deleted += Number((await db.deleteFrom('locations').where(byKeys(rows)).executeTakeFirst()).numDeletedRows);
  }
  return deleted;
}
