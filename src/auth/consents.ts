import type { Executor } from '../db/tx.js';

/** What a consent needs of the client (src/oauth/grants/clients.ts's OAuthClient has these members). */
interface ConsentClient {
  clientId: string;
  permissions: string[];
  allowPermissionChoice: boolean;
}

/**
 * Remembered consent (docs/oauth.md "Remembered consent"): once an owner allows a client, later
 * authorizations of that client skip the consent page, until the permissions the client asks
 * change, the owner revokes the app (connected applications, /oauth2/revoke, `fsm tokens revoke`),
 * or the owner ticks `reauthenticate` or chooses Deny on a consent page.
 */
export interface Owner {
  userId: number;
  accountId: number;
}

const setOf = (permissions: readonly string[]) => JSON.stringify([...new Set(permissions)].sort());

/** Remembers that the owner allowed `granted` out of what the client asks now. */
export async function rememberConsent(
  db: Executor,
  owner: Owner,
  client: Pick<ConsentClient, 'clientId' | 'permissions'>,
  granted: readonly string[],
  now: number,
): Promise<void> {
  const row = { asked: setOf(client.permissions), granted: JSON.stringify([...granted]), created: now };
  await db
    .insertInto('oauth_consents')
    .values({ account_id: owner.accountId, user_id: owner.userId, client_id: client.clientId, ...row })
    .onConflict((oc) => oc.columns(['account_id', 'user_id', 'client_id']).doUpdateSet(row))
    .execute();
}

/**
 * The permissions the owner allowed this client, when that consent still holds: the client asks
 * exactly what it asked then, and (without choice) the owner gave all of it. Else undefined.
 */
export async function rememberedConsent(
  db: Executor,
  owner: Owner,
  client: ConsentClient,
): Promise<string[] | undefined> {
  const row = await db
    .selectFrom('oauth_consents')
    .select(['asked', 'granted'])
    .where('account_id', '=', owner.accountId)
    .where('user_id', '=', owner.userId)
    .where('client_id', '=', client.clientId)
    .executeTakeFirst();
  if (!row || row.asked !== setOf(client.permissions)) return undefined;
  const granted = (JSON.parse(row.granted) as string[]).filter((p) => client.permissions.includes(p));
  if (granted.length === 0) return undefined;
  if (!client.allowPermissionChoice && granted.length !== new Set(client.permissions).size) return undefined;
  return client.permissions.filter((p) => granted.includes(p));
}

/** Forgets an owner's consent for one client, or (without clientId) for every client. */
export async function forgetConsent(
  db: Executor,
  where: { accountId?: number; userId?: number; clientId?: string },
): Promise<void> {
  if (where.userId === undefined && where.clientId === undefined) throw new Error('forgetConsent: whose consent?');
  await db
    .deleteFrom('oauth_consents')
    .$if(where.accountId !== undefined, (q) => q.where('account_id', '=', where.accountId!))
    .$if(where.userId !== undefined, (q) => q.where('user_id', '=', where.userId!))
    .$if(where.clientId !== undefined, (q) => q.where('client_id', '=', where.clientId!))
    .execute();
}
