import type { Executor } from '../db/tx.js';

/** Who runs a client (null: not stated). Kept apart from clients.ts: only the consent page and the CLI use it. */
export async function clientPublisher(db: Executor, clientId: string): Promise<string | null> {
  const row = await db
    .selectFrom('oauth_clients')
    .select('publisher')
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return row?.publisher ?? null;
}

export async function setClientPublisher(db: Executor, clientId: string, publisher: string | null): Promise<void> {
  await db.updateTable('oauth_clients').set({ publisher }).where('client_id', '=', clientId).execute();
}
