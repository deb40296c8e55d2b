import type { Kysely } from 'kysely';
import { readShared, type SharedRead } from '../db/batched.js';
import type { DB } from '../db/types.js';

type EpochRow = { id: number; auth_epoch: number | string };
const reads = new WeakMap<object, SharedRead<EpochRow>>();

/**
 * An account's revocation epoch (`accounts.auth_epoch`, migration 013), read for a request with a
 * cached token (src/auth/bearer.ts). The requests of a moment share one statement
 * (src/db/batched.ts): read by a statement sent after the request asked, so a revocation committed
 * before a request arrived is seen by that request, as with a statement of its own.
 */
export async function epochOf(db: Kysely<DB>, account: number): Promise<number | undefined> {
  let read = reads.get(db);
  if (!read) {
    read = {
      key: 'epochs',
      values: {},
      build: (ids) => db.selectFrom('accounts').select(['id', 'auth_epoch']).where('id', 'in', ids),
      idOf: (r) => Number(r.id),
    };
    reads.set(db, read);
  }
  const row = await readShared(db, read, account);
  return row === undefined ? undefined : Number(row.auth_epoch);
}
