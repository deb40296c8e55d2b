import type { Expression, Kysely, SqlBool } from 'kysely';
import type { Executor } from '../../db/tx.js';
import type { AuthContext, Collection, EB, Item, Row } from './collection.js';
import type { AssocField, ScalarField } from './fields.js';
import { whereToSql } from './filter.js';
import type { ListQuery, Projection } from './modifiers.js';
import { COUNTED_TABLES, rowCounter } from '../../db/migrations/004_performance.js';

// The machinery builds queries from declarations, so it works on untyped table names.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const untyped = (db: Executor) => db as unknown as Kysely<any>;

/** The rows a caller may see: always the account, narrowed by the policy for 'own' access. */
export function scope(c: Collection, ctx: AuthContext, eb: EB, access: 'all' | 'own' = 'all'): Expression<SqlBool> {
  const account = eb(`${c.table}.account_id`, '=', ctx.accountId);
  if (access === 'own' && c.policy.own) return eb.and([account, c.policy.own(ctx, eb, c.table)]);
  return account;
}

export function readAccess(c: Collection, ctx: AuthContext): 'all' | 'own' {
  return c.policy.read[ctx.role] === 'own' ? 'own' : 'all';
}

function columnsFor(c: Collection, p: Projection): string[] {
  const cols = new Set(['id']);
  for (const name of p.fields) {
    const field = c.fields[name];
    if (field.kind === 'scalar' || field.kind === 'assoc') cols.add(field.column);
    else if (field.kind === 'object') for (const m of Object.values(field.members)) cols.add(m.column);
    else if (field.kind === 'computed') for (const col of field.columns) cols.add(col);
  }
  return [...cols].map((col) => `${c.table}.${col}`);
}

export async function list(db: Executor, c: Collection, ctx: AuthContext, q: ListQuery): Promise<{ items: Item[]; count: number }> {
  const access = readAccess(c, ctx);
  const where = (eb: EB) => (q.where ? eb.and([scope(c, ctx, eb, access), whereToSql(c, q.where, eb)]) : scope(c, ctx, eb, access));
  let rowsQuery = untyped(db).selectFrom(c.table).select(columnsFor(c, q.projection)).where(where);
  for (const s of q.sort) rowsQuery = rowsQuery.orderBy(`${c.table}.${s.column}`, s.desc ? 'desc' : 'asc');
  rowsQuery = rowsQuery.limit(q.recordsPerPage).offset((q.page - 1) * q.recordsPerPage);
  const [rows, count] = await Promise.all([rowsQuery.execute(), countRows(db, c, ctx, q, where)]);
  return { items: await present(db, c, ctx, q.projection, rows), count };
}

/**
 * recordsCount. Unfiltered lists of every row in the account read the count the triggers of
 * migration 004 keep, so they do not slow down as the account grows; the rest count their rows.
 */
async function countRows(db: Executor, c: Collection, ctx: AuthContext, q: ListQuery, where: (eb: EB) => Expression<SqlBool>): Promise<number> {
  if (!q.where && readAccess(c, ctx) === 'all' && (COUNTED_TABLES as readonly string[]).includes(c.table)) {
    const kept = await untyped(db).selectFrom('counters').select('value').where('account_id', '=', ctx.accountId).where('name', '=', rowCounter(c.table)).executeTakeFirst();
    return Number(kept?.value ?? 0);
  }
  const counted = await untyped(db).selectFrom(c.table).select((eb) => eb.fn.countAll<number>().as('n')).where(where).executeTakeFirstOrThrow();
  return Number(counted.n);
}

/** Items by id, in the order given, within what the caller may read. Missing ids are skipped. */
export async function readByIds(db: Executor, c: Collection, ctx: AuthContext, ids: number[], p: Projection): Promise<Item[]> {
  if (ids.length === 0) return [];
  const rows = await untyped(db)
    .selectFrom(c.table)
    .select(columnsFor(c, p))
    .where((eb) => eb.and([scope(c, ctx, eb, readAccess(c, ctx)), eb(`${c.table}.id`, 'in', ids)]))
    .execute();
  const byId = new Map(rows.map((r) => [r.id as number, r]));
  return present(db, c, ctx, p, ids.map((id) => byId.get(id)).filter((r): r is Row => r !== undefined));
}

/** Whole stored rows by id within the account (and the 'own' scope when given). */
export async function rowsByIds(db: Executor, c: Collection, ctx: AuthContext, ids: number[], access: 'all' | 'own'): Promise<Map<number, Row>> {
  if (ids.length === 0) return new Map();
  const rows = await untyped(db)
    .selectFrom(c.table)
    .selectAll(c.table)
    .where((eb) => eb.and([scope(c, ctx, eb, access), eb(`${c.table}.id`, 'in', ids)]))
    .execute();
  return new Map(rows.map((r) => [r.id as number, r]));
}

function toApi(s: Pick<ScalarField, 'type'>, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (s.type) {
    case 'boolean':
      return v === 1 || v === true;
    case 'time':
      return new Date(Number(v)).toISOString();
    case 'flag':
    case 'integer':
    case 'number':
      return Number(v);
    default:
      return v;
  }
}

async function loadAssoc(db: Executor, ctx: AuthContext, field: AssocField, ids: number[], members: Set<string> | '*') {
  const names = Object.keys(field.members).filter((m) => members === '*' || members.has(m));
  const rows = await untyped(db)
    .selectFrom(field.table)
    .select(['id', ...names.map((m) => `${field.members[m].column} as ${m}`)])
    .where('id', 'in', ids)
    .where(field.accountColumn, '=', ctx.accountId)
    .execute();
  return new Map(
    rows.map((r) => [r.id as number, Object.fromEntries([['id', r.id], ...names.map((m) => [m, toApi(field.members[m], r[m])])])]),
  );
}

export async function present(db: Executor, c: Collection, ctx: AuthContext, p: Projection, rows: Row[]): Promise<Item[]> {
  const expanded = new Map<string, Map<number, unknown>>();
  for (const [name, members] of p.expand) {
    const field = c.fields[name];
    if (field.kind !== 'assoc') continue;
    const ids = [...new Set(rows.map((r) => r[field.column]).filter((v) => v !== null))] as number[];
    expanded.set(name, ids.length ? await loadAssoc(db, ctx, field, ids, members) : new Map());
  }
  const lists = new Map<string, Map<number, Record<string, unknown>[]>>();
  const computed = new Map<string, unknown[]>();
  for (const name of p.fields) {
    const field = c.fields[name];
    if (field.kind === 'assocList' && rows.length) {
      lists.set(name, await field.load(db, ctx.accountId, rows.map((r) => r.id), p.expand.has(name)));
    }
    if (field.kind === 'computed' && rows.length) computed.set(name, await field.compute(db, ctx, rows));
  }
  return rows.map((row, index) => {
    const item: Item = { id: row.id };
    for (const name of p.fields) {
      const field = c.fields[name];
      switch (field.kind) {
        case 'scalar':
          item[name] = toApi(field, row[field.column]);
          break;
        case 'object': {
          const entries = Object.entries(field.members).filter(([, m]) => row[m.column] !== null);
          item[name] = Object.fromEntries(entries.map(([k, m]) => [k, toApi(m, row[m.column])]));
          break;
        }
        case 'assoc': {
          const id = row[field.column];
          item[name] = id === null ? null : (expanded.get(name)?.get(id) ?? { id });
          break;
        }
        case 'assocList':
          item[name] = lists.get(name)?.get(row.id) ?? [];
          break;
        case 'computed':
          item[name] = computed.get(name)?.[index] ?? null;
          break;
      }
    }
    return item;
  });
}
