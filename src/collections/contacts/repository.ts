import type { Executor } from '../../db/runner.js';

/** The contacts collection's own queries (its rules ask these). */

/** The client's primary contacts other than `except`. */
export async function primaryContacts(
  db: Executor,
  accountId: number,
  clientId: number,
  except: number,
): Promise<number[]> {
  const rows = await db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .where('is_primary', '=', 1)
    .where('id', '<>', except)
    .execute();
  return rows.map((r) => r.id);
}

/** Clears `isPrimary` of those contacts. */
export async function clearPrimary(db: Executor, accountId: number, ids: number[], now: number): Promise<void> {
  await db
    .updateTable('contacts')
    .set({ is_primary: 0, modified: now })
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .execute();
}
