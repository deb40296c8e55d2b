import { epochColumn } from '../../auth/bearer.js';
import { prepared, run, slot } from '../../db/compiled.js';
import { rowVersion } from '../../db/counted.js';
import { untyped, type Executor } from '../../db/tx.js';
import type { Caller, Collection } from './collection.js';
import type { ListQuery } from './modifiers.js';
import { fieldsKey } from './present.js';
import { readAccess } from './read.js';

/**
 * Answers of unfiltered lists, remembered per process under their table's change version: the same
 * page asked again (an integrator polling `/jobs`, a screen refreshed) is answered with the bytes
 * it was answered with, after one small statement shows that no row of the table changed in the
 * account since. The version is the one the row counts keep (src/db/counted.ts): triggers move it
 * in the same transaction as every insert, update and delete of the table, cascades and writes
 * outside the server included, and the page that is remembered was read in the same statement as
 * the version it is remembered under (one snapshot). Every process checks the same version, so
 * processes never disagree.
 *
 * Only answers made of the table's own rows qualify: every row of the account (not an 'own'
 * scope, which reads other tables), no `where` (its page and count are two statements), and no
 * field that reads elsewhere or changes with time (expanded associations, association lists,
 * computed fields such as a file's signed URL). A remembered answer is a whole page: the byte
 * budget bounds what the process keeps.
 */
const BUDGET = 4 * 2 ** 20;

interface Remembered {
  version: number;
  raw: string;
}

/** Per database (a Kysely instance and its transactions share the executor's adapter), least recently used first. */
const caches = new WeakMap<object, { entries: Map<string, Remembered>; size: number }>();

function cacheOf(db: Executor) {
  const adapter = db.getExecutor().adapter;
  let cache = caches.get(adapter);
  if (!cache) caches.set(adapter, (cache = { entries: new Map(), size: 0 }));
  return cache;
}

/** Whether the answer is made of the table's own rows in the account alone (see above). */
export function rememberable(c: Collection, ctx: Caller, q: ListQuery): boolean {
  if (!c.counted || q.where || q.projection.expand.size || readAccess(c, ctx) !== 'all') return false;
  return q.projection.fields.every((name) => ['scalar', 'object', 'assoc'].includes(c.fields[name].kind));
}

const keyOf = (c: Collection, ctx: Caller, q: ListQuery) =>
  `${c.table}|${ctx.accountId}|${fieldsKey(q.projection.fields)}|${q.sort.map((s) => `${s.desc ? '-' : ''}${s.column}`).join(',')}|${q.page}|${q.recordsPerPage}`;

/** The table's change version in the account now; with the caller's token epoch when a GET still has it to read. */
async function versionNow(db: Executor, c: Collection, ctx: Caller): Promise<number | undefined> {
  const epoch = ctx.epoch && ctx.epoch.seen === undefined ? ctx.epoch : undefined;
  const q = prepared<{ version: number | string | null; auth_epoch?: number | string }>(
    untyped(db),
    `answers|${c.table}|${epoch ? 'e' : ''}`,
    () =>
      untyped(db)
        .selectNoFrom(() => [
          rowVersion(db, c.table, slot<number>('account')).as('version'),
          ...(epoch ? [epochColumn(untyped(db), slot<number>('account'))] : []),
        ])
        .compile(),
    { oneRow: true },
  );
  const [row] = await run(untyped(db), q.bind({ account: ctx.accountId }));
  if (epoch && row?.auth_epoch !== undefined && row.auth_epoch !== null) epoch.seen = Number(row.auth_epoch);
  return row?.version === null || row?.version === undefined ? undefined : Number(row.version);
}

/**
 * The list's answer: the remembered one while the table's version has not moved, else `make`'s,
 * remembered under the version its page was read with (when it had a row to carry it).
 */
export async function rememberedList(
  db: Executor,
  c: Collection,
  ctx: Caller,
  q: ListQuery,
  make: () => Promise<{ raw: string; version?: number }>,
): Promise<string> {
  if (!rememberable(c, ctx, q)) return (await make()).raw;
  const cache = cacheOf(db);
  const key = keyOf(c, ctx, q);
  const known = cache.entries.get(key);
  if (known) {
    if ((await versionNow(db, c, ctx)) === known.version) {
      cache.entries.delete(key);
      cache.entries.set(key, known);
      return known.raw;
    }
    cache.entries.delete(key);
    cache.size -= known.raw.length;
  }
  const made = await make();
  if (made.version !== undefined && made.raw.length <= BUDGET / 16) {
    cache.entries.set(key, { version: made.version, raw: made.raw });
    cache.size += made.raw.length;
    for (const [k, old] of cache.entries) {
      if (cache.size <= BUDGET) break;
      cache.entries.delete(k);
      cache.size -= old.raw.length;
    }
  }
  return made.raw;
}
