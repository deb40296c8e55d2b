import type { Kysely } from 'kysely';
import { query, slot } from '../db/runner.js';
import type { DB } from '../db/types.js';

/**
 * Accounts' revocation epochs (`accounts.auth_epoch`, migration 013) as requests ask for them, read
 * by one statement for many. A request's epoch is read by a statement sent after the request asked
 * (never one already on its way), so what it reads is at least as new as the request: a revocation
 * committed before a request arrived is seen by that request, as with a statement of its own.
 * At most one such statement per database is on its way at a time: the requests that ask while one
 * is wait for the next, sent as soon as it is answered, and share it. Under load the requests of
 * a whole round trip share one read instead of one each (the auth layer's one step,
 * src/auth/bearer.ts); a lone request waits for nothing but its own turn of the event loop.
 */
interface Batch {
  accounts: Map<number, { resolve: (epoch: number | undefined) => void; reject: (err: unknown) => void }[]>;
}
interface State {
  /** The requests waiting for the next statement. */
  next?: Batch;
  /** A statement is on its way (or about to be sent): the next waits for it. */
  busy: boolean;
}

const states = new WeakMap<object, State>();
/** Accounts read by one statement at most; more wait for the next (a bounded set of statement shapes). */
const MAX = 32;

export function epochOf(db: Kysely<DB>, account: number): Promise<number | undefined> {
  let state = states.get(db);
  if (!state) states.set(db, (state = { busy: false }));
  if (!state.next) {
    state.next = { accounts: new Map() };
    if (!state.busy) send(db, state);
  }
  const batch = state.next;
  return new Promise((resolve, reject) => {
    const waiting = batch.accounts.get(account);
    if (waiting) waiting.push({ resolve, reject });
    else batch.accounts.set(account, [{ resolve, reject }]);
  });
}

/** Sends the next statement once this turn's requests have joined it; then the one after, if any asked. */
function send(db: Kysely<DB>, state: State): void {
  state.busy = true;
  setImmediate(() => {
    const taken = state.next!;
    state.next = undefined;
    void read(db, taken).finally(() => {
      state.busy = false;
      if (state.next) send(db, state);
    });
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
