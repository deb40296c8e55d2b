import { sql } from 'kysely';
import { dialectOf, execute, query, slot, untyped, type Executor } from '../../db/runner.js';
import type { Caller, Collection } from './collection.js';
import { readAccess } from './access.js';
import { scope } from './read.js';

/**
 * An item's strong ETag: its id and row version. The version is bumped by a trigger on every
 * update of the row (whoever makes it: the pipeline, a rule, a SET NULL cascade) and of its
 * association lists (migration 011_row_versions), so the ETag changes whenever the item does.
 */
export const etagOf = (id: number, version: number): string => `"${id}.${version}"`;

/**
 * The item's current ETag, or undefined when the caller cannot see it. `lock` locks the row until
 * the commit where writers run side by side (SELECT … FOR UPDATE), for a check that must hold.
 */
export async function currentEtag(
  db: Executor,
  c: Collection,
  caller: Caller,
  id: number,
  opts: { lock?: boolean; access?: 'all' | 'own' } = {},
): Promise<string | undefined> {
  const access = opts.access ?? readAccess(c, caller);
  if (!opts.lock && access === 'all') {
    // Every GET of an item asks this: built once per table, run per request (as read.ts does).
    const [row] = await query<{ version: number }>(
      db,
      `etag|${c.table}`,
      () =>
        untyped(db)
          .selectFrom(c.table)
          .select('version')
          .where('account_id', '=', slot('account'))
          .where('id', '=', slot('id')),
      { account: caller.accountId, id },
      { oneRow: true },
    );
    return row ? etagOf(id, Number(row.version)) : undefined;
  }
  const q = untyped(db)
    .selectFrom(c.table)
    .select('version')
    .where((eb) => eb.and([scope(c, caller, eb, access), eb(`${c.table}.id`, '=', id)]))
    .modifyEnd(opts.lock ? dialectOf(db).lockClause('update') : sql``);
  const [row] = await execute<{ version: number }>(db, q);
  return row ? etagOf(id, Number(row.version)) : undefined;
}

/** The entity tags of an If-Match / If-None-Match value; `*` alone is ['*']. */
function tags(header: string): { weak: boolean; tag: string }[] {
  if (header.trim() === '*') return [{ weak: false, tag: '*' }];
  return [...header.matchAll(/(W\/)?("[^"]*")/g)].map((m) => ({ weak: !!m[1], tag: m[2] }));
}

/**
 * If-Match (RFC 9110 §13.1.1): strong comparison; `*` matches any current item. A target without
 * an entity tag (`etag` undefined: a collection, an action) is matched by `*` only.
 */
export function ifMatchHolds(header: string, etag: string | undefined): boolean {
  return tags(header).some((t) => t.tag === '*' || (!t.weak && etag !== undefined && t.tag === etag));
}

/** If-None-Match (RFC 9110 §13.1.2): weak comparison; true means "not modified". */
export function noneMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return tags(header).some((t) => t.tag === '*' || t.tag === etag);
}
