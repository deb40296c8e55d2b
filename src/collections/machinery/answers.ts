import { remembered } from '../../db/memo.js';
import { untyped, type Executor } from '../../db/runner.js';
import type { Caller, Collection } from './collection.js';
import type { ListQuery } from './modifiers.js';
import { fieldsKey } from './present.js';
import { readAccess } from './access.js';
import { rememberable, scope } from './read.js';

/**
 * Answers of unfiltered lists are remembered under their table's change version (src/db/memo.ts):
 * the same page asked again is answered with the bytes it was answered with, after one small
 * statement shows that no row of the table changed in the account since. Which answers qualify:
 * `rememberable` (read.ts, whose lists read the version with their rows when they do).
 */

/** The list's answer: remembered while the table's version has not moved, else `make`'s. */
export async function rememberedList(
  db: Executor,
  c: Collection,
  ctx: Caller,
  q: ListQuery,
  remember: boolean,
  make: () => Promise<{ raw: string; version?: number }>,
): Promise<string> {
  if (!remember || !rememberable(c, ctx, q)) return (await make()).raw;
  // An 'own' scope: its terms for this caller (the SQL and values); the tables it reads (ownReads)
  // are checked with the table's version.
  let own = '';
  const ownScope = readAccess(c, ctx) === 'own';
  if (ownScope) {
    const terms = untyped(db)
      .selectFrom(c.table)
      .select('id')
      .where((eb) => scope(c, ctx, eb, 'own'))
      .compile();
    own = `|own=${terms.sql}|${JSON.stringify(terms.parameters)}`;
  }
  const sort = q.sort.map((s) => `${s.desc ? '-' : ''}${s.column}`).join(',');
  const near = q.near ? `|near=${q.near.lat},${q.near.lng},${q.near.radiusKm ?? ''},${q.near.nearestFirst}` : '';
  // A search's words (folded: the same words, the same answer) and whether it ranks (no `sort`).
  const search = q.search?.length ? `|q=${q.search.join(' ')}${q.ranked ? '|ranked' : ''}` : '';
  const key = `answer|${fieldsKey(q.projection.fields)}|${sort}|${q.page}|${q.recordsPerPage}${near}${search}${own}`;
  return remembered(
    db,
    c.table,
    ctx.accountId,
    key,
    async () => {
      const { raw, version } = await make();
      return { value: raw, version };
    },
    (raw) => raw.length,
    ownScope ? c.policy.ownReads! : [],
  );
}
