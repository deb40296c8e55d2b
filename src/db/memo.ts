import { rowVersion } from './counted.js';
import { inTransaction, query, sharedOf, slot, untyped, type Executor } from './runner.js';

/**
 * The one cache of the read path: values remembered per process under a counted table's change
 * version in an account. Triggers move that version in the same transaction as every insert,
 * update and delete of the table (src/db/counted.ts: cascades and writes made outside the server
 * included), so while it has not moved, nothing of the table changed in the account and a value
 * computed from its rows alone is still true. Every process checks the same version, so
 * processes never disagree.
 *
 * What is remembered, and why it earns its place (docs/performance.md):
 * - a list's whole answer (src/collections/machinery/answers.ts): the same page asked again (an
 *   integrator polling, a screen refreshed) costs one small statement instead of the page;
 * - a filtered list's count (src/collections/machinery/count.ts): `~` must look at every row
 *   (8 % of 100,000 jobs in W2), so counting grew with the account; reading the version does not.
 *
 * A value is only remembered under a version read in the same statement (one snapshot) and never
 * inside a transaction, whose uncommitted bump a rollback could hand to another change. The byte
 * budget bounds what the process keeps; the least recently used go first.
 */
const BUDGET = 4 * 2 ** 20;
/** One value may take at most this share of the budget. */
const LARGEST = BUDGET / 16;

interface Entry {
  /** The table's version, then those of the other tables it read (`also`). */
  versions: (number | undefined)[];
  value: unknown;
  weight: number;
}

interface Memo {
  entries: Map<string, Entry>;
  size: number;
  /** Keys whose value is being made, and when it is made (done or failed). */
  making: Map<string, Promise<unknown>>;
}

function memoOf(db: Executor): Memo {
  const caches = sharedOf(db).caches;
  let memo = caches.get('memo') as Memo | undefined;
  if (!memo) caches.set('memo', (memo = { entries: new Map(), size: 0, making: new Map() }));
  return memo;
}

/**
 * The tables' change versions in the account now, read by one statement (undefined for a table
 * where no row was ever counted).
 */
async function versionsNow(db: Executor, tables: readonly string[], account: number): Promise<(number | undefined)[]> {
  const [row] = await query<Record<string, number | string | null>>(
    db,
    `memo versions|${tables.join(',')}`,
    () => untyped(db).selectNoFrom(() => tables.map((t, i) => rowVersion(db, t, slot<number>('account')).as(`v${i}`))),
    { account },
    { oneRow: true },
  );
  return tables.map((_, i) => {
    const v = row?.[`v${i}`];
    return v === null || v === undefined ? undefined : Number(v);
  });
}

export interface Remembered<T> {
  value: T;
  /** The table's version read in the same statement as the value; undefined: not remembered. */
  version?: number;
}

/**
 * The value remembered under `key` while the table's version in the account has not moved;
 * otherwise `make`'s, remembered under the version it was read with. `size` tells a value's size
 * in bytes.
 *
 * A value that reads other tables too (an 'own' scope, a `where` through an association) names
 * them in `also`: it is remembered under their versions as well, read before it is made (while
 * they have not moved, nothing it read there changed; versions only grow, so a value made after a
 * later change is never taken for one made before it). Checking it reads every version in one
 * statement. When one of them has no version (no row ever counted), it is not remembered.
 */
export async function remembered<T>(
  db: Executor,
  table: string,
  account: number,
  key: string,
  make: () => Promise<Remembered<T>>,
  size: (value: T) => number,
  also: readonly string[] = [],
): Promise<T> {
  if (inTransaction(db)) return (await make()).value;
  const memo = memoOf(db);
  const fullKey = `${table}|${account}|${key}`;
  const tables = [table, ...also];
  /** The entry as it is now, if it was made at these versions (then the most recently used). */
  const current = (now: (number | undefined)[]): Entry | undefined => {
    const e = memo.entries.get(fullKey);
    if (!e || !now.every((v, i) => v === e.versions[i])) return undefined;
    put(memo, fullKey, e);
    return e;
  };
  let now = memo.entries.has(fullKey) || also.length ? await versionsNow(db, tables, account) : undefined;
  // Looked up once the versions are read: another request may have made it meanwhile.
  const known = now && current(now);
  if (known) return known.value as T;
  // The same value being made for another request: wait for it, and take it if it was made at the
  // versions read after this request arrived (a change committed before the request is never
  // missed). Many requests asking at once after a change make the value once, not once each.
  const other = memo.making.get(fullKey);
  if (other) {
    await other.catch(() => undefined);
    now ??= await versionsNow(db, tables, account);
    const made = current(now);
    if (made) return made.value as T;
  }
  const elsewhere = now?.slice(1) ?? [];
  if (elsewhere.some((v) => v === undefined)) return (await make()).value;
  const making = (async () => {
    const made = await make();
    if (made.version !== undefined) {
      const weight = size(made.value) + fullKey.length;
      const versions = [made.version, ...elsewhere];
      if (weight <= LARGEST) put(memo, fullKey, { versions, value: made.value, weight });
    }
    return made.value;
  })();
  if (!memo.making.has(fullKey)) {
    memo.making.set(fullKey, making);
    const done = () => void (memo.making.get(fullKey) === making && memo.making.delete(fullKey));
    making.then(done, done);
  }
  return making;
}

/** Sets (or refreshes) an entry as the most recently used, then drops the least recently used past the budget. */
function put(memo: Memo, key: string, entry: Entry): void {
  const old = memo.entries.get(key);
  if (old) {
    memo.entries.delete(key);
    memo.size -= old.weight;
  }
  memo.entries.set(key, entry);
  memo.size += entry.weight;
  for (const [k, e] of memo.entries) {
    if (memo.size <= BUDGET) break;
    memo.entries.delete(k);
    memo.size -= e.weight;
  }
}
