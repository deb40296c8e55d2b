import { untyped, type Executor } from '../../db/runner.js';

/** The events collection's own queries. */

/**
 * The newest event id of each of the accounts (live streams' poll, src/http/event-stream.ts).
 * Each account's by its own max, one index seek each: `max(id) … group by account_id` read every
 * event of the accounts on SQLite (25 ms at 100,000 events, five times a second), which halved
 * the rate of the other requests while streams were open.
 */
export async function newestEventIds(
  db: Executor,
  accountIds: number[],
): Promise<{ account_id: number; max: number | string | null }[]> {
  const rows = await untyped(db)
    .selectFrom('accounts')
    .select([
      'accounts.id as account_id',
      (eb) =>
        eb
          .selectFrom('events')
          .select((e) => e.fn.max('events.id').as('max'))
          .whereRef('events.account_id', '=', 'accounts.id')
          .as('max'),
    ])
    .where('accounts.id', 'in', accountIds)
    .execute();
  return rows as { account_id: number; max: number | string | null }[];
}
