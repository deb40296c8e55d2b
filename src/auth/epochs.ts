import type { Kysely } from 'kysely';
import { query, slot } from '../db/runner.js';
import type { DB } from '../db/types.js';

/**
 * Accounts' revocation epochs (`accounts.auth_epoch`, migration 013) as the requests of one turn of
 * the event loop ask for them, read by one statement for them all. Every request of a turn asks
 * before the turn ends and the statement is sent after it (setImmediate), so what it reads is at
 * least as new as each request that waits for it: a revocation committed before a request arrived
 * is seen by that request, as with a statement of its own. Under load many requests arrive in one
 * turn, and share one round trip instead of one each (the auth layer's one step, src/auth/bearer.ts).
 */
interface Batch {
  accounts: Map<number, { resolve: (epoch: number | undefined) => void; reject: (err: unknown) => void }[]>;
}

const batches = new WeakMap<object, Batch>();
/** Accounts read by one statement at most; more wait for the next (a bounded set of statement shapes). */
const MAX = 32;

export function epochOf(db: Kysely<DB>, account: number): Promise<number | undefined> {
  let batch = batches.get(db);
  if (!batch) {
    batch = { accounts: new Map() };
    batches.set(db, batch);
    const taken = batch;
    setImmediate(() => {
      batches.delete(db);
      void read(db, taken);
    });
  }
  return new Promise((resolve, reject) => {
    const waiting = batch.accounts.get(account);
    if (waiting) waiting.push({ resolve, reject });
    else batch.accounts.set(account, [{ resolve, reject }]);
  });
}

async function read(db: Kysely<DB>, batch: Batch): Promise<void> {
  const all = [...batch.accounts.keys()];
  for (let i = 0; i < all.length; i += MAX) {
    const ids = all.slice(i, i + MAX);
    try {
      const rows = await query<{ id: number; auth_epoch: number | string }>(
        db,
        `epochs|${ids.length}`,
        () =>
          db
            .selectFrom('accounts')
            .select(['id', 'auth_epoch'])
            .where(
              'id',
              'in',
              ids.map((_, k) => slot<number>(`${k}`)),
            ),
        { ...ids },
      );
      const found = new Map(rows.map((r) => [Number(r.id), Number(r.auth_epoch)]));
      for (const id of ids) for (const w of batch.accounts.get(id)!) w.resolve(found.get(id));
    } catch (err) {
      for (const id of ids) for (const w of batch.accounts.get(id)!) w.reject(err);
    }
  }
}
