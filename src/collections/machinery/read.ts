import { PostgresAdapter, type Expression, type SqlBool } from 'kysely';
import { prepared, run, slot } from '../../db/compiled.js';
import { untyped, type Executor } from '../../db/tx.js';
import type { Caller, Collection, EB, Item, Row } from './collection.js';
import { fieldsKey, present } from './present.js';
import { whereToSql } from './filter.js';
import type { ListQuery, Projection } from './modifiers.js';
import { countRows, KEPT_COUNT, keptCount, keptCountColumn } from './count.js';
import { epochColumn } from '../../auth/bearer.js';
import { rowVersion } from '../../db/counted.js';
import type { EpochCheck } from '../../auth/context.js';

/** The rows a caller may see: always the account, narrowed by the policy for 'own' access. */
export function scope(c: Collection, ctx: Caller, eb: EB, access: 'all' | 'own' = 'all'): Expression<SqlBool> {
  const account = eb(`${c.table}.account_id`, '=', ctx.accountId);
  if (access === 'own' && c.policy.own) return eb.and([account, c.policy.own(ctx, eb, c.table)]);
  return account;
}

export function readAccess(c: Collection, ctx: Caller): 'all' | 'own' {
  return c.policy.read[ctx.role] === 'own' ? 'own' : 'all';
}

function columnsFor(c: Collection, p: Projection, version = false): string[] {
  const cols = new Set(version ? ['id', 'version'] : ['id']);
  for (const name of p.fields) {
    const field = c.fields[name];
    if (field.kind === 'scalar' || field.kind === 'assoc') cols.add(field.column);
    else if (field.kind === 'object') for (const m of Object.values(field.members)) cols.add(m.column);
    else if (field.kind === 'computed') for (const col of field.columns) cols.add(col);
  }
  return [...cols].map((col) => `${c.table}.${col}`);
}

/**
 * The account condition of a list's rows query. On PostgreSQL as a range: with `account_id = $1`
 * the planner treats account_id as a constant, drops it from the sort and walks the primary key,
 * past every other account's rows (W2, or W1 for the second account: 34 ms at 100,000 users; the
 * plans are in docs/performance.md). A range keeps `order by account_id, <sort>` whole, which only
 * the (account_id, ...) indexes provide. SQLite keeps the equality its planner combines with the
 * next index column.
 */
function accountCondition(db: Executor, c: Collection, eb: EB, account: number): Expression<SqlBool> {
  const col = `${c.table}.account_id`;
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? eb.and([eb(col, '>=', account), eb(col, '<=', account)])
    : eb(col, '=', account);
}

/**
 * A page of a list and the total count. `version`: on the compiled path the table's change version
 * in the account comes back too, read in the same statement as the page (src/collections/machinery/answers.ts).
 */
export async function list(
  db: Executor,
  c: Collection,
  ctx: Caller,
  q: ListQuery,
  opts: { version?: boolean } = {},
): Promise<{ items: Item[]; count: number; version?: number }> {
  const access = readAccess(c, ctx);
  const where = (eb: EB) =>
    q.where ? eb.and([scope(c, ctx, eb, access), whereToSql(c, q.where, eb, db)]) : scope(c, ctx, eb, access);
  const rowsWhere = (eb: EB, account: number) => {
    const parts = [accountCondition(db, c, eb, account)];
    if (access === 'own' && c.policy.own) parts.push(c.policy.own(ctx, eb, c.table));
    if (q.where) parts.push(whereToSql(c, q.where, eb, db));
    return eb.and(parts);
  };
  // An unfiltered list of every row reads the count the triggers keep: as a column of its rows
  // query, so the page and its count are one statement (one round trip, one snapshot).
  const kept = keptCount(c, q, access);
  const compiled = !q.where && access === 'all';
  // A GET's token epoch rides along with the page (one round trip less), on the compiled path.
  const epoch = compiled ? unread(ctx) : undefined;
  const version = compiled && opts.version && !!c.counted;
  const rowsQuery = (account: number, limit: number, offset: number) => {
    let query = untyped(db)
      .selectFrom(c.table)
      .select(columnsFor(c, q.projection))
      .where((eb) => rowsWhere(eb, account));
    if (kept) query = query.select(keptCountColumn(db, c, account));
    if (epoch) query = query.select(epochColumn(db, account));
    if (version) query = query.select(rowVersion(db, c.table, account).as(TABLE_VERSION));
    // account_id first: one direction with the sort, so (account_id, <sort>) indexes can be walked.
    query = query.orderBy(`${c.table}.account_id`, q.sort[0].desc ? 'desc' : 'asc');
    for (const s of q.sort) query = query.orderBy(`${c.table}.${s.column}`, s.desc ? 'desc' : 'asc');
    return query.limit(limit).offset(offset).$castTo<Row>();
  };
  const offset = (q.page - 1) * q.recordsPerPage;
  // Without a `where`, the rows query differs per request only in account, page size and page.
  const rows = compiled
    ? run(
        db,
        prepared(
          db,
          `list|${c.table}|${fieldsKey(q.projection.fields)}|${sortKey(q)}|${epoch ? 'e' : ''}${version ? 'v' : ''}`,
          () => rowsQuery(slot('account'), slot('limit'), slot('offset')).compile(),
        ).bind({ account: ctx.accountId, limit: q.recordsPerPage, offset }),
      ).then((found) => seen(epoch, found))
    : rowsQuery(ctx.accountId, q.recordsPerPage, offset).execute();
  if (kept) {
    const found = await rows;
    // A page past the end has no row to carry the count: it is read on its own.
    const count = found.length ? Number(found[0][KEPT_COUNT] ?? 0) : await countRows(db, c, ctx, q, access, where);
    const v = version && found.length && found[0][TABLE_VERSION] !== null ? Number(found[0][TABLE_VERSION]) : undefined;
    return { items: await present(db, c, ctx, q.projection, found), count, version: v };
  }
  const [found, count] = await Promise.all([rows, countRows(db, c, ctx, q, access, where)]);
  return { items: await present(db, c, ctx, q.projection, found), count };
}

/** The caller's epoch check when no statement has read the epoch yet. */
const unread = (ctx: Caller): EpochCheck | undefined =>
  ctx.epoch && ctx.epoch.seen === undefined ? ctx.epoch : undefined;

/** Notes the epoch a statement carried (when it returned a row to carry it); the rows as they are. */
function seen(epoch: EpochCheck | undefined, rows: Row[]): Row[] {
  if (epoch && rows.length) epoch.seen = Number(rows[0].auth_epoch);
  return rows;
}

const TABLE_VERSION = 'table_version';

const sortKey = (q: ListQuery) => q.sort.map((s) => `${s.desc ? '-' : ''}${s.column}`).join(',');

/**
 * The rows of items by id within what the caller may read, with the columns of a projection (and
 * the row version, for an ETag, when asked). Missing ids are skipped; the order is the database's.
 */
export async function projectedRows(
  db: Executor,
  c: Collection,
  ctx: Caller,
  ids: number[],
  p: Projection,
  opts: { version?: boolean } = {},
): Promise<Row[]> {
  if (ids.length === 0) return [];
  const access = readAccess(c, ctx);
  const compiled = access === 'all' && ids.length <= 10;
  const epoch = compiled ? unread(ctx) : undefined;
  const build = (accountId: number, idList: number[]) => {
    const q = untyped(db)
      .selectFrom(c.table)
      .select(columnsFor(c, p, opts.version))
      .where((eb) =>
        eb.and([
          access === 'all' ? eb(`${c.table}.account_id`, '=', accountId) : scope(c, ctx, eb, access),
          eb(`${c.table}.id`, 'in', idList),
        ]),
      );
    return (epoch ? q.select(epochColumn(db, accountId)) : q).$castTo<Row>();
  };
  // A single item (GET /jobs/ID) or a small batch is compiled once per shape and bound per request.
  return compiled
    ? seen(
        epoch,
        await run(
          db,
          prepared(
            db,
            `byIds|${c.table}|${fieldsKey(p.fields)}|${ids.length}|${opts.version ? 'v' : ''}${epoch ? 'e' : ''}`,
            () =>
              build(
                slot('account'),
                ids.map((_, i) => slot<number>(`${i}`)),
              ).compile(),
            { oneRow: ids.length === 1 },
          ).bind({ account: ctx.accountId, ...ids }),
        ),
      )
    : await build(ctx.accountId, ids).execute();
}

/** Items by id, in the order given, within what the caller may read. Missing ids are skipped. */
export async function readByIds(
  db: Executor,
  c: Collection,
  ctx: Caller,
  ids: number[],
  p: Projection,
): Promise<Item[]> {
  const rows = await projectedRows(db, c, ctx, ids, p);
  if (ids.length <= 1) return present(db, c, ctx, p, rows);
  const byId = new Map(rows.map((r) => [r.id as number, r]));
  return present(
    db,
    c,
    ctx,
    p,
    ids.map((id) => byId.get(id)).filter((r): r is Row => r !== undefined),
  );
}

/** Whole stored rows by id within the account (and the 'own' scope when given). */
export async function rowsByIds(
  db: Executor,
  c: Collection,
  ctx: Caller,
  ids: number[],
  access: 'all' | 'own',
): Promise<Map<number, Row>> {
  if (ids.length === 0) return new Map();
  const build = (accountId: number, idList: number[]) =>
    untyped(db)
      .selectFrom(c.table)
      .selectAll(c.table)
      .where((eb) =>
        eb.and([
          access === 'all' ? eb(`${c.table}.account_id`, '=', accountId) : scope(c, ctx, eb, access),
          eb(`${c.table}.id`, 'in', idList),
        ]),
      )
      .$castTo<Row>();
  // Every write reads its items (and the change recorder reads them again): a batch of a few is
  // compiled once per size and bound per write, as readByIds does.
  const rows =
    access === 'all' && ids.length <= 10
      ? await run(
          db,
          prepared(db, `rowsByIds|${c.table}|${ids.length}`, () =>
            build(
              slot('account'),
              ids.map((_, i) => slot<number>(`${i}`)),
            ).compile(),
          ).bind({ account: ctx.accountId, ...ids }),
        )
      : await build(ctx.accountId, ids).execute();
  return new Map(rows.map((r) => [r.id as number, r]));
}
