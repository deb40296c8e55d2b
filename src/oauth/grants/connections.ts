import { connectionRows, endClientAccess } from './repository.js';
import type { Executor } from '../../db/tx.js';
import { ALL_PERMISSIONS } from '../../collections/index.js';
import { forgetConsent } from '../../auth/consents.js';

/** A client holding live tokens for one owner, as the connected-applications page shows it. */
export interface Connection {
  clientId: string;
  name: string;
  /** Who runs it, as the operator registered it; null when not stated. */
  publisher: string | null;
  /** Every permission any of its live tokens carries, in the catalogue's order. */
  permissions: string[];
  /** When the oldest of its live tokens was issued. */
  since: number;
}

/** The owner's connections: clients (not revoked) with an unrevoked, unexpired token for them. */
export async function listConnections(
  db: Executor,
  owner: { userId: number; accountId: number },
  now: number,
): Promise<Connection[]> {
  const rows = await connectionRows(db, owner, now);
  const byClient = new Map<
    string,
    { name: string; publisher: string | null; permissions: Set<string>; since: number }
  >();
  for (const r of rows) {
    const c = byClient.get(r.client_id) ?? {
      name: r.name,
      publisher: r.publisher,
      permissions: new Set<string>(),
      since: Number(r.created),
    };
    for (const p of JSON.parse(r.permissions) as string[]) c.permissions.add(p);
    c.since = Math.min(c.since, Number(r.created));
    byClient.set(r.client_id, c);
  }
  return [...byClient]
    .map(([clientId, c]) => ({
      clientId,
      name: c.name,
      publisher: c.publisher,
      permissions: ALL_PERMISSIONS.filter((p) => c.permissions.has(p)),
      since: c.since,
    }))
    .sort((a, b) => a.since - b.since || a.clientId.localeCompare(b.clientId));
}

/**
 * Ends a client's access for one owner: every access and refresh token, and the codes not yet
 * redeemed (else a code issued a moment ago would bring the connection back), and the remembered
 * consent, so connecting again asks the owner again.
 */
export async function disconnect(
  db: Executor,
  owner: { userId: number; accountId: number },
  clientId: string,
): Promise<void> {
  await endClientAccess(db, owner, clientId);
  await forgetConsent(db, { accountId: owner.accountId, userId: owner.userId, clientId });
}
