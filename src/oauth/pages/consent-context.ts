import type { Executor } from '../../db/tx.js';
import { clientPublisher, userNames } from './pages-repository.js';

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
  const [user, publisher] = await Promise.all([
    userNames(db, owner.accountId, owner.userId),
    clientPublisher(db, clientId),
  ]);
  return {
    owner: { name: `${user?.first_name ?? ''} ${user?.last_name ?? ''}`.trim(), login: user?.login ?? '' },
    publisher,
  };
}
