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
  version: number;
  value: unknown;
  weight: number;
}

interface Memo {
  entries: Map<string, Entry>;
  size: number;
}

function memoOf(db: Executor): Memo {
  const caches = sharedOf(db).caches;
  let memo = caches.get('memo') as Memo | undefined;
  if (!memo) caches.set('memo', (memo = { entries: new Map(), size: 0 }));
  return memo;
}

/** The table's change version in the account now (undefined when no row was ever counted). */
export async function versionNow(db: Executor, table: string, account: number): Promise<number | undefined> {
  const [row] = await query<{ version: number | string | null }>(
    db,
    `memo version|${table}`,
    () => untyped(db).selectNoFrom(() => [rowVersion(db, table, slot<number>('account')).as('version')]),
    { account },
    { oneRow: true },
  );
  return row?.version === null || row?.version === undefined ? undefined : Number(row.version);
}

/**
 * Other tables' versions now, as a part of a memo key (`|visits@12`), for a value that reads them
 * too (an 'own' scope, a `where` through an association). Read before the value is made: while
 * they have not moved, nothing it read there changed (versions only grow, so a value made after a
 * later change is never asked for under the earlier versions). Undefined when one of them has no
 * version (no row ever counted): such a value is not remembered.
 */
export async function versionsKey(
  db: Executor,
  tables: readonly string[],
  account: number,
): Promise<string | undefined> {
  const versions = await Promise.all(tables.map((t) => versionNow(db, t, account)));
  if (versions.some((v) => v === undefined)) return undefined;
  return tables.map((t, i) => `|${t}@${versions[i]}`).join('');
}

export interface Remembered<T> {
  value: T;
  /** The table's version read in the same statement as the value; undefined: not remembered. */
  version?: number;
}

/**
 * The value remembered under `key` while the table's version in the account has not moved;
 * otherwise `make`'s, remembered under the version it was read with. `size` tells a value's size in bytes.
 */
export async function remembered<T>(
  db: Executor,
  table: string,
  account: number,
  key: string,
  make: () => Promise<Remembered<T>>,
  size: (value: T) => number,
): Promise<T> {
  if (inTransaction(db)) return (await make()).value;
  const memo = memoOf(db);
  const fullKey = `${table}|${account}|${key}`;
  const known = memo.entries.get(fullKey);
  if (known && (await versionNow(db, table, account)) === known.version) {
    put(memo, fullKey, known); // most recently used now
    return known.value as T;
  }
  const made = await make();
  if (made.version !== undefined) {
    const weight = size(made.value) + fullKey.length;
    if (weight <= LARGEST) put(memo, fullKey, { version: made.version, value: made.value, weight });
  }
  return made.value;
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
