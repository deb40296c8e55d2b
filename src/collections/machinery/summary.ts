import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { dialectOf, execute, untyped, type Executor } from '../../db/runner.js';
import type { Caller, Collection, EB, Row } from './collection.js';
import { moneyIn, whereToSql } from './filter.js';
import { accountMoney, divRound, MONEY_SCALE } from './money.js';
import { customColumns } from './custom.js';
import { readAccess } from './access.js';
import { scope } from './read.js';
import { converterOf, isoTime, KINDS } from './kinds/index.js';
import type { Aggregate, GroupKey, SummaryQuery } from './summary-query.js';

/** One group of a summary as answered: its keys, then each aggregate by name. */
export type SummaryGroup = { group: Record<string, unknown> } & Record<string, unknown>;

const GROUPS = 'fsm_groups';
const g = (i: number) => `fsm_g${i}`;
const a = (i: number) => `fsm_a${i}`;
/** An average's count of values beside its sum. */
const n = (i: number) => `fsm_n${i}`;

/** A sum read as exact decimal text: integers past 2^53 survive the driver (money adds up in 10^-4 units). */
const exactSum = (col: Expression<unknown>) => sql<string>`cast(sum(${col}) as text)`;
/** Added exactly: integer columns, scaled decimals included; a plain `number` is a double anyway. */
const exact = (agg: Aggregate) => KINDS[agg.field!.type].sum === 'exact';

/** A stored integer of 10^-scale (as BigInt) as the JSON number nearest its decimal. */
function unitsToNumber(units: bigint, scale: number): number {
  if (scale === 0) return Number(units);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  return Number(`${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`);
}

/**
 * The summary of a collection (PRODUCT §19): one GROUP BY statement over the rows the caller's list
 * would show (the same scope and `where`), its groups in ascending order of their keys, nulls first,
 * the number of groups carried by every row (a window count over the groups).
 */
export async function summarize(
  db: Executor,
  c: Collection,
  ctx: Caller,
  q: SummaryQuery,
): Promise<{ summary: SummaryGroup[]; count: number }> {
  const access = readAccess(c, ctx);
  const dialect = dialectOf(db);
  const custom = await customColumns(db, c, ctx, q.where, []);
  const needsAccount =
    q.groups.some((k) => k.kind === 'period') ||
    q.aggregates.some((x) => x.fn === 'avg' && x.field?.money) ||
    moneyIn(c, q.where);
  const account = needsAccount ? await accountMoney(db, ctx.accountId) : undefined;
  const ref = (column: string) => sql.ref(`${c.table}.${column}`);

  const keyExpr = (k: GroupKey): RawBuilder<unknown> | Expression<unknown> =>
    k.kind === 'period' ? dialect.period(k.period, ref(k.column), k.source, account!.timeZone) : ref(k.column);
  const aggExprs = (x: Aggregate, i: number) => {
    if (x.fn === 'count') return [sql<number>`count(*)`.as(a(i))];
    const col = x.source === 'text' ? dialect.instant(ref(x.column!)) : ref(x.column!);
    if (x.fn === 'sum') return [(exact(x) ? exactSum(col) : sql`sum(${col})`).as(a(i))];
    if (x.fn === 'avg')
      return exact(x) ? [exactSum(col).as(a(i)), sql<number>`count(${col})`.as(n(i))] : [sql`avg(${col})`.as(a(i))];
    return [(x.fn === 'min' ? sql`min(${col})` : sql`max(${col})`).as(a(i))];
  };

  const build = (limit: number, offset: number) => {
    let qb = untyped(db)
      .selectFrom(c.table)
      .select([
        ...q.groups.map((k, i) => sql`${keyExpr(k)}`.as(g(i))),
        ...q.aggregates.flatMap(aggExprs),
        sql<number>`count(*) over ()`.as(GROUPS),
      ])
      .where((eb: EB) => {
        const parts: Expression<SqlBool>[] = [scope(c, ctx, eb, access)];
        if (q.where) parts.push(whereToSql(c, q.where, eb, db, ctx, { custom, exponent: account?.exponent }));
        return eb.and(parts);
      });
    // By position: an expression with bound values (the zone) is the same group on both databases.
    for (let i = 0; i < q.groups.length; i++) qb = qb.groupBy(sql.raw(String(i + 1)));
    for (let i = 0; i < q.groups.length; i++) qb = qb.orderBy(sql.raw(`${i + 1} asc nulls first`));
    return qb.limit(limit).offset(offset).$castTo<Row>();
  };
  const offset = (q.page - 1) * q.recordsPerPage;
  const rows = await execute<Row>(db, build(q.recordsPerPage, offset));
  // Past the last group: the number of groups from the first row of the same statement.
  const counted = rows.length || q.page === 1 ? rows : await execute<Row>(db, build(1, 0));
  const count = counted.length ? Number(counted[0][GROUPS]) : 0;

  const keys = q.groups.map((k) => {
    if (k.kind === 'assoc') return (v: unknown) => (v === null || v === undefined ? null : { id: Number(v) });
    if (k.kind === 'period') return (v: unknown) => (v ?? null) as string | null;
    return converterOf(k.field);
  });
  const values = q.aggregates.map((x, i) => presenter(x, i, account?.exponent));
  const summary = rows.map((row) => {
    const out: SummaryGroup = { group: Object.fromEntries(q.groups.map((k, j) => [k.name, keys[j](row[g(j)])])) };
    for (let j = 0; j < q.aggregates.length; j++) out[q.aggregates[j].name] = values[j](row);
    return out;
  });
  return { summary, count };
}

/** How an aggregate's columns are shown: exact sums, averages rounded like the field, dates as the API writes them. */
function presenter(x: Aggregate, i: number, exponent: number | undefined): (row: Row) => unknown {
  const raw = (row: Row) => row[a(i)];
  if (x.fn === 'count') return (row) => Number(raw(row));
  const field = x.field!;
  const scale = field.scale ?? 0;
  if ((x.fn === 'sum' || x.fn === 'avg') && !exact(x))
    return (row) => (raw(row) === null || raw(row) === undefined ? null : Number(raw(row)));
  if (x.fn === 'sum') return (row) => (raw(row) === null ? null : unitsToNumber(BigInt(String(raw(row))), scale));
  if (x.fn === 'avg') {
    // Money: to the currency's minor unit; another decimal: to its scale; an integer: to a whole number.
    const unit = field.money && exponent !== undefined ? 10n ** BigInt(MONEY_SCALE - exponent) : 1n;
    return (row) => {
      const count = BigInt(Number(row[n(i)] ?? 0));
      if (raw(row) === null || count === 0n) return null;
      return unitsToNumber(divRound(BigInt(String(raw(row))), count * unit) * unit, scale);
    };
  }
  // min and max: as the field is shown; a date-time text compared as an instant is shown in UTC.
  if (x.source === 'text') return (row) => (raw(row) === null ? null : isoTime(Number(raw(row))));
  const convert = converterOf(field);
  return (row) => convert(raw(row));
}
