import { expressionBuilder, sql, type Expression, type SqlBool } from 'kysely';
import { execute, dialectOf, query, slot, untyped, type Executor } from '../../db/runner.js';
import { rowVersion } from '../../db/counted.js';
import type { Caller, Collection, EB, Item, Row } from './collection.js';
import { fieldsKey, present } from './present.js';
import { assocSortKey, moneyIn, steers, whereToSql } from './filter.js';
import { columnsOf } from './kinds/index.js';
import { accountMoney } from './money.js';
import type { ListQuery, Projection } from './modifiers.js';
import { countRows, KEPT_COUNT, keptCount, keptCountColumn } from './count.js';
import { distanceColumn, nearCondition, nearestOrder } from './near.js';
import { customColumns } from './custom.js';
import { readShared, type SharedRead } from '../../db/batched.js';
import { readAccess } from './access.js';

/** The rows a caller may see: always the account, narrowed by the policy for 'own' access. */
export function scope(c: Collection, ctx: Caller, eb: EB, access: 'all' | 'own' = 'all'): Expression<SqlBool> {
  const account = eb(`${c.table}.account_id`, '=', ctx.accountId);
  if (access === 'own' && c.policy.own) return eb.and([account, c.policy.own(ctx, eb, c.table)]);
  return account;
}

/**
 * Whether a list's answer may be remembered (answers.ts). Only answers made of the table's own
 * rows qualify: every row of the account, or an 'own' scope whose policy names the tables it reads
 * (`ownReads`: the answer is then remembered under their versions too, and the scope's own
 * terms); no `where` (it may name other tables' members); and no field that reads elsewhere or
 * changes with time (expanded associations, association lists, computed fields such as a file's
 * signed URL; a computed field `stable` is neither).
 */
export function rememberable(c: Collection, ctx: Caller, q: ListQuery): boolean {
  if (!c.counted || q.where || q.projection.expand.size) return false;
  if (readAccess(c, ctx) !== 'all' && !c.policy.ownReads) return false;
  // A sort on an association member (`client.name`) reads another table.
  if (q.sort.some((s) => s.assoc)) return false;
  // With `near`, `distance` is computed from the row itself (its location) and the point.
  return q.projection.fields.every((name) => {
    const field = c.fields[name];
    return (
      ['scalar', 'object', 'assoc'].includes(field.kind) ||
      // A one-way list's links bump their owner's row (migration 100's triggers): the table's version moves with them.
      (field.kind === 'assocList' && field.oneWay) ||
      (field.kind === 'computed' && field.stable) ||
      (q.near && name === 'distance')
    );
  });
}

/** The columns a projection reads, worked out once per collection and field set. */
const columnSets = new WeakMap<Collection, Map<string, string[]>>();
function columnsFor(c: Collection, p: Projection, version = false): string[] {
  let sets = columnSets.get(c);
  if (!sets) columnSets.set(c, (sets = new Map()));
  const key = `${version ? 'v' : ''}|${fieldsKey(p.fields)}`;
  let columns = sets.get(key);
  if (!columns) {
    const cols = new Set(version ? ['id', 'version'] : ['id']);
    for (const name of p.fields) {
      const field = c.fields[name];
      if (field.kind === 'scalar') for (const col of columnsOf(field)) cols.add(col);
      else if (field.kind === 'assoc') cols.add(field.column);
      else if (field.kind === 'object')
        for (const m of Object.values(field.members)) for (const col of columnsOf(m)) cols.add(col);
      else if (field.kind === 'computed') for (const col of field.columns) cols.add(col);
    }
    columns = [...cols].map((col) => `${c.table}.${col}`);
    if (sets.size >= 200) sets.clear();
    sets.set(key, columns);
  }
  return columns;
}

/**
 * A page of a steered `where` walks the items when more than this many times a page's end
 * (offset + page) match: it then reads about (offset + page) × items / matches rows, fewer than
 * the matches the indexes read (a match through them costs a few rows' walk: FTS5, the row by id).
 */
const WALK_FACTOR = 20;
const TABLE_VERSION = 'table_version';
const MATCH_COUNT = 'fsm_match_count';
const sortKey = (q: ListQuery) => q.sort.map((s) => `${s.desc ? '-' : ''}${s.column}`).join(',');

/**
 * A page of a list and the total count. `version`: for an unfiltered list of every row, the
 * table's change version in the account comes back too, read in the same statement as the page
 * (the answer is then remembered under it: src/collections/machinery/answers.ts).
 */
export async function list(
  db: Executor,
  c: Collection,
  ctx: Caller,
  q: ListQuery,
  opts: { version?: boolean } = {},
): Promise<{ items: Item[]; count: number; version?: number }> {
  const access = readAccess(c, ctx);
  // `customFields.<key>` in where/sort, typed by the account's definitions (PRODUCT §12).
  const custom = await customColumns(
    db,
    c,
    ctx,
    q.where,
    q.sort.flatMap((s) => (s.custom ? [s.custom] : [])),
  );
  // A money member compared: its literals carry at most the account currency's decimals.
  const exponent = moneyIn(c, q.where) ? (await accountMoney(db, ctx.accountId)).exponent : undefined;
  const search = q.search?.length ? q.search : undefined;
  // Ranked where the rank is a table of its own: the page joins its matches instead of filtering.
  // With `near` and no `sort`, nearest first wins: the search then only filters.
  const ranking = search && q.ranked && !q.near ? dialectOf(db).searchRank(c.table, search) : undefined;
  const filters = (eb: EB, joined = false, indexed = true) => {
    const parts: Expression<SqlBool>[] = [];
    if (q.where) parts.push(whereToSql(c, q.where, eb, db, ctx, { custom, exponent, indexed }));
    if (q.near) parts.push(nearCondition(c, q.near, eb));
    if (search && !joined) parts.push(dialectOf(db).searchMatch(c.table, search));
    return parts;
  };
  const where = (eb: EB) => {
    const parts = filters(eb);
    return parts.length ? eb.and([scope(c, ctx, eb, access), ...parts]) : scope(c, ctx, eb, access);
  };
  const offset = (q.page - 1) * q.recordsPerPage;
  // A `where` whose terms have an indexed and a scanning form (filter.ts `steers`: `~` through a
  // trigram index, association members): its count first, through the indexes (remembered under
  // the versions), then the page in the form that reads the fewest rows. Walking the items in the
  // sort's order stops after a page of matches, (offset + page) / share of the items; the indexes
  // read every match. Measured: `title ~ "pump"` (8 % of 100,000 jobs) 1 ms walking, 60 ms
  // through the index; a word no job holds, 100 ms and 1 ms (docs/performance.md, issue 51).
  const steered = steers(c, q.where);
  const countedFirst = steered ? await countRows(db, c, ctx, q, access, where) : undefined;
  // Only a sort by id is walked by an index of every table ((account_id, id)); another reads every
  // match anyway, and the indexes find them fastest.
  const walkable = q.sort.every((s) => s.column === 'id' && !s.assoc && !s.custom) && !q.near && !search;
  const indexed = countedFirst === undefined || !walkable || countedFirst <= WALK_FACTOR * (offset + q.recordsPerPage);
  // An unfiltered list of every row reads the count the triggers keep: as a column of its rows
  // query, so the page and its count are one statement (one round trip, one snapshot).
  const kept = keptCount(c, q, access);
  // Any other answer remembered (answers.ts: `near` or `q` over every row, an 'own' scope whose
  // policy names what it reads) reads the version with its rows too; the count is then read after
  // the rows (a later snapshot: a write between them moves the version, so the answer is not
  // answered again).
  const version = !!opts.version && (kept || rememberable(c, ctx, q));
  // A search reads every match to rank or filter them: their number comes with the page, as a
  // window count, instead of a second search (a page past the end reads it on its own).
  const matched = !kept && !!search;
  const rowsQuery = (account: number, limit: number, offset: number) => {
    let from = untyped(db).selectFrom(c.table);
    if (ranking?.join)
      from = from.innerJoin(ranking.join.as('fts'), (j) => j.onRef('fts.fts_id', '=', `${c.table}.id`));
    let rows = from.select(columnsFor(c, q.projection)).where((eb) => {
      const parts = [dialectOf(db).accountCondition(eb, `${c.table}.account_id`, account)];
      if (access === 'own' && c.policy.own) parts.push(c.policy.own(ctx, eb, c.table));
      parts.push(...filters(eb, !!ranking?.join, indexed));
      return eb.and(parts);
    });
    if (q.near) rows = rows.select(distanceColumn(c, q.near));
    if (kept) rows = rows.select(keptCountColumn(db, c, account));
    if (matched) rows = rows.select(sql<number>`count(*) over ()`.as(MATCH_COUNT));
    if (version) rows = rows.select(rowVersion(db, c.table, account).as(TABLE_VERSION));
    // account_id first: one direction with the sort, so (account_id, <sort>) indexes can be walked.
    rows = rows.orderBy(`${c.table}.account_id`, q.sort[0].desc ? 'desc' : 'asc');
    // `near` without `sort`: nearest first, ties by id (the default sort).
    if (q.near?.nearestFirst) rows = rows.orderBy(nearestOrder());
    // Without `sort`, a search answers its best matches first (ties by id).
    if (ranking) rows = rows.orderBy(ranking.rank);
    for (const s of q.sort) {
      const dir = s.desc ? 'desc' : 'asc';
      const expr = s.custom ? custom?.get(s.custom)?.expr : undefined;
      // A custom field's items without a value come last, on both databases.
      if (s.assoc) rows = rows.orderBy(assocSortKey(c, s.assoc, ctx, expressionBuilder()), dir);
      else if (expr) rows = rows.orderBy(sql`${expr} is null`).orderBy(expr, dir);
      else rows = rows.orderBy(`${c.table}.${s.column}`, dir);
    }
    const { pageBound } = dialectOf(db);
    return rows.limit(pageBound(limit)).offset(pageBound(offset)).$castTo<Row>();
  };
  // Without a `where` or a scope of its own, a list differs per request only in account and page.
  const found =
    !q.where && !q.near && !search && !custom && !q.sort.some((s) => s.assoc) && access === 'all'
      ? query<Row>(
          db,
          `list|${c.table}|${fieldsKey(q.projection.fields)}|${sortKey(q)}|${version ? 'v' : ''}`,
          () => rowsQuery(slot('account'), slot('limit'), slot('offset')),
          { account: ctx.accountId, limit: q.recordsPerPage, offset },
        )
      : execute<Row>(db, rowsQuery(ctx.accountId, q.recordsPerPage, offset));
  const rows = await found;
  // The count: carried by the page's rows (kept by triggers, or the search's window count); else,
  // a page that is not full ends the list, so it is what came before it and on it (a lookup by an
  // integrator's id costs one statement, not two); else (or past the end) read on its own.
  const carried = kept ? KEPT_COUNT : matched ? MATCH_COUNT : undefined;
  // A count read before the page is a snapshot older than a version read with it: read again then.
  const count =
    countedFirst !== undefined && !version
      ? countedFirst
      : carried && rows.length
        ? Number(rows[0][carried] ?? 0)
        : rows.length && rows.length < q.recordsPerPage
          ? offset + rows.length
          : await countRows(db, c, ctx, q, access, where);
  const v = version && rows.length && rows[0][TABLE_VERSION] !== null ? Number(rows[0][TABLE_VERSION]) : undefined;
  return { items: await present(db, c, ctx, q.projection, rows), count, version: v };
}

/** Items by id within what the caller may read, with the columns of a projection (and the row version, for an ETag). */
function byIds(
  db: Executor,
  c: Collection,
  ctx: Caller,
  ids: number[],
  columns: string[] | '*',
  access: 'all' | 'own',
) {
  const build = (accountId: number, idList: number[]) =>
    (columns === '*'
      ? untyped(db).selectFrom(c.table).selectAll(c.table)
      : untyped(db).selectFrom(c.table).select(columns)
    )
      .where((eb) =>
        eb.and([
          access === 'all' ? eb(`${c.table}.account_id`, '=', accountId) : scope(c, ctx, eb, access),
          eb(`${c.table}.id`, 'in', idList),
        ]),
      )
      .$castTo<Row>();
  const shape = `byIds|${c.table}|${columns === '*' ? '*' : fieldsKey(columns)}`;
  // A single item (GET /jobs/ID): read with the items other requests of the moment ask
  // (src/db/batched.ts), by a statement built once per shape.
  if (access === 'all' && ids.length === 1) {
    const read: SharedRead<Row> = {
      key: shape,
      values: { account: ctx.accountId },
      build: (idSlots) => build(slot('account'), idSlots),
      idOf: (r) => Number(r.id),
    };
    return readShared(db, read, ids[0]).then((row) => (row ? [row] : []));
  }
  // A small batch is built once per shape and run per request.
  return access === 'all' && ids.length <= 10
    ? query<Row>(
        db,
        `${shape}|${ids.length}`,
        () =>
          build(
            slot('account'),
            ids.map((_, i) => slot<number>(`${i}`)),
          ),
        { account: ctx.accountId, ...ids },
        { oneRow: ids.length === 1 },
      )
    : execute<Row>(db, build(ctx.accountId, ids));
}

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
  return byIds(db, c, ctx, ids, columnsFor(c, p, opts.version), readAccess(c, ctx));
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
  // Every write reads its items (and the change recorder reads them again).
  const rows = await byIds(db, c, ctx, ids, '*', access);
  return new Map(rows.map((r) => [r.id as number, r]));
}
