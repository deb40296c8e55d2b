import { sql } from 'kysely';
import type { Executor } from '../../db/tx.js';

/**
 * Whether a message may not be sent (PRODUCT §18): its client opted out, or its address is that of
 * a client who opted out or of one of such a client's contacts. Addresses compare case-insensitively.
 */
export async function optedOut(
  db: Executor,
  accountId: number,
  clientId: number | null | undefined,
  to: string,
): Promise<boolean> {
  const address = to.toLowerCase();
  const found = await db
    .selectFrom('clients')
    .select('clients.id')
    .where('clients.account_id', '=', accountId)
    .where('clients.email_opt_out', '=', 1)
    .where((eb) =>
      eb.or([
        ...(clientId ? [eb('clients.id', '=', clientId)] : []),
        eb(sql`lower(clients.email)`, '=', address),
        eb.exists(
          eb
            .selectFrom('contacts')
            .select('contacts.id')
            .whereRef('contacts.account_id', '=', 'clients.account_id')
            .whereRef('contacts.client_id', '=', 'clients.id')
            .where(sql`lower(contacts.email)`, '=', address),
        ),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}
