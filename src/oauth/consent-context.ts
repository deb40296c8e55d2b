import type { Executor } from '../db/tx.js';

/** What the consent page says besides the request: who is signed in, and who runs the client. */
export interface ConsentContext {
  owner: { name: string; login: string };
  publisher: string | null;
}

export async function consentContext(
  db: Executor,
  owner: { userId: number; accountId: number },
  clientId: string,
): Promise<ConsentContext> {
  const [user, client] = await Promise.all([
    db
      .selectFrom('users')
      .select(['first_name', 'last_name', 'login'])
      .where('account_id', '=', owner.accountId)
      .where('id', '=', owner.userId)
      .executeTakeFirst(),
    db.selectFrom('oauth_clients').select('publisher').where('client_id', '=', clientId).executeTakeFirst(),
  ]);
  return {
    owner: { name: `${user?.first_name ?? ''} ${user?.last_name ?? ''}`.trim(), login: user?.login ?? '' },
    publisher: client?.publisher ?? null,
  };
}
