import { ApiError, validationError, type ApiErrorBody } from '../../http/errors.js';
import type { Database } from '../../db/index.js';
import { withTransaction, type Executor } from '../../db/tx.js';
import type { AuthContext, Collection, Item, Op, Row } from './collection.js';
import { readAccess, readByIds, rowsByIds, untyped } from './read.js';
import { lockChangeCounter } from './count.js';
import { parseFields } from './modifiers.js';
import { itemToRow, rawData, validateItem } from './validate.js';

export const MAX_ITEMS = 100;

export interface WriteMetadata {
  receivedItemsCount: number;
  validItems: number[];
  invalidItems: number[];
}

export type WriteResult =
  | { result: 'success'; items: Item[]; metadata: WriteMetadata }
  | { result: 'failure'; failures: { rawData: unknown; errors: ApiErrorBody[] }[]; metadata: WriteMetadata };

/** Thrown inside the transaction to roll everything back and answer with the failure envelope. */
class BatchFailed extends Error {
  constructor(readonly errors: ApiErrorBody[][]) {
    super('batch failed');
  }
}

function outcome(c: Collection, items: unknown[], errors: ApiErrorBody[][]): WriteResult | undefined {
  const invalid = errors.flatMap((e, i) => (e.length ? [i] : []));
  if (invalid.length === 0) return undefined;
  return {
    result: 'failure',
    failures: invalid.map((i) => ({ rawData: rawData(c, items[i]), errors: errors[i] })),
    metadata: {
      receivedItemsCount: items.length,
      validItems: errors.flatMap((e, i) => (e.length ? [] : [i])),
      invalidItems: invalid,
    },
  };
}

function isUniqueViolation(err: unknown): err is Error {
  const e = err as { code?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A restricting foreign key refused a delete: the row is still referenced elsewhere. */
function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** Writes every association list the item gives (`users [{id}]` of a workgroup), replacing the stored list. */
async function saveLists(w: { ctx: AuthContext; db: Executor }, c: Collection, id: number, item: Item) {
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind === 'assocList' && Array.isArray(item[name])) {
      await field.save(w.db, w.ctx.accountId, id, (item[name] as { id: number }[]).map((x) => x.id));
    }
  }
}

function uniqueField(c: Collection, err: Error): string {
  const text = `${err.message} ${(err as { detail?: string }).detail ?? ''} ${(err as { constraint?: string }).constraint ?? ''}`;
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind === 'scalar' && field.unique && new RegExp(`\\b${field.column}\\b`).test(text)) return name;
  }
  return 'id';
}

/** The access an op needs; throws 403 when the role has none. */
function writeAccess(c: Collection, ctx: AuthContext, op: Op, items: Item[]): 'all' | 'own' {
  const access = c.policy.write[ctx.role];
  if (access === 'none') throw new ApiError('roleForbids');
  if (access === 'own' && op === 'create' && !(c.policy.ownsNew && items.every((it) => c.policy.ownsNew!(ctx, it)))) {
    throw new ApiError('roleForbids');
  }
  return access;
}

async function checkReferences(db: Executor, c: Collection, ctx: AuthContext, items: Item[], errors: ApiErrorBody[][]) {
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind !== 'assoc' && field.kind !== 'assocList') continue;
    const idsOf = (it: Item): number[] => {
      const v = it[name];
      if (v === undefined || v === null) return [];
      return field.kind === 'assoc' ? [(v as { id: number }).id] : (v as { id: number }[]).map((x) => x.id);
    };
    const wanted = [...new Set(items.flatMap(idsOf))];
    if (!wanted.length) continue;
    const accountColumn = field.kind === 'assoc' ? field.accountColumn : 'account_id';
    let q = untyped(db).selectFrom(field.table).select('id').where('id', 'in', wanted).where(accountColumn, '=', ctx.accountId);
    for (const [col, val] of Object.entries(field.kind === 'assoc' ? (field.referenceFilter ?? {}) : {})) q = q.where(col, '=', val);
    const found = new Set((await q.execute()).map((r) => r.id as number));
    items.forEach((it, i) => {
      if (idsOf(it).some((id) => !found.has(id))) errors[i].push(validationError('reference', name));
    });
  }
}

async function checkUnique(db: Executor, c: Collection, ctx: AuthContext, items: Item[], rows: Row[], errors: ApiErrorBody[][]) {
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind !== 'scalar' || !field.unique) continue;
    const seen = new Map<unknown, number>();
    const values = items.flatMap((it, i) => (it[name] === undefined || it[name] === null ? [] : [[i, it[name]] as const]));
    for (const [i, v] of values) {
      if (seen.has(v)) errors[i].push(validationError('duplicate', name));
      seen.set(v, i);
    }
    if (!values.length) continue;
    let q = untyped(db).selectFrom(c.table).select(['id', field.column]).where(field.column, 'in', values.map(([, v]) => v));
    if (field.unique === 'account') q = q.where('account_id', '=', ctx.accountId);
    const taken = await q.execute();
    for (const [i, v] of values) {
      if (taken.some((t) => t[field.column] === v && t.id !== rows[i]?.id)) errors[i].push(validationError('unique', name));
    }
  }
}

/**
 * Every create, update and delete of every collection: validate all items, then apply all of
 * them in one transaction, or none. The collection's rules hook in at fixed points.
 */
export async function write(database: Database, c: Collection, ctx: AuthContext, op: Op, input: unknown[], urlId?: number): Promise<WriteResult> {
  if (input.length > MAX_ITEMS) throw new ApiError('tooManyItems', `at most ${MAX_ITEMS} items`);
  const errors = input.map((it) => validateItem(c, it, op));
  const items = input as Item[];
  const ids = op === 'create' ? [] : items.map((it, i) => (errors[i].length ? 0 : (it.id as number)));
  ids.forEach((id, i) => {
    if (id && urlId !== undefined && id !== urlId) errors[i].push(validationError('invalid', 'id', 'must be the id in the URL'));
    else if (id && ids.indexOf(id) !== i) errors[i].push(validationError('duplicate', 'id'));
  });
  const access = writeAccess(c, ctx, op, items.filter((_, i) => !errors[i].length));
  if (c.rules.validate && op !== 'delete') items.forEach((it, i) => errors[i].length || errors[i].push(...c.rules.validate!(it, op, ctx)));
  const early = outcome(c, input, errors);
  if (early) return early;

  const prepared = items.map((it) => (op === 'delete' ? {} : itemToRow(c, it, op, ctx.now)));
  if (c.rules.prepare && op !== 'delete') await Promise.all(items.map((it, i) => c.rules.prepare!(ctx, op, it, prepared[i])));

  let written: number[];
  let olds: (Row | undefined)[] = [];
  try {
    written = await withTransaction(database, async (db) => {
      const w = { ctx, db };
      const existing = op === 'create' ? new Map<number, Row>() : await rowsByIds(db, c, ctx, ids, readAccess(c, ctx));
      const owned = access === 'own' && op !== 'create' ? await rowsByIds(db, c, ctx, ids, 'own') : existing;
      items.forEach((it, i) => {
        if (op !== 'create' && !existing.has(ids[i])) errors[i].push(validationError('notFound', 'id'));
      });
      if (errors.some((e) => e.length)) throw new BatchFailed(errors);
      if (ids.some((id) => id && !owned.has(id))) throw new ApiError('roleForbids');
      olds = ids.map((id) => existing.get(id));
      items.forEach((it, i) => c.rules.authorize?.(ctx, op, it, olds[i]));
      if (op !== 'delete') {
        await checkReferences(db, c, ctx, items, errors);
        await checkUnique(db, c, ctx, items, olds as Row[], errors);
      }
      if (c.rules.check) for (const [i, it] of items.entries()) errors[i].push(...(await c.rules.check(w, op, it, olds[i])));
      if (errors.some((e) => e.length)) throw new BatchFailed(errors);
      if (op !== 'create' && database.dialect === 'postgres') await lockChangeCounter(db, c.table, ctx.accountId);
      return applyAll(w, c, op, items, prepared, olds);
    });
  } catch (err) {
    if (err instanceof BatchFailed) return outcome(c, input, err.errors)!;
    throw err;
  }
  await c.rules.committed?.(database, ctx, op, written, olds);

  const metadata = { receivedItemsCount: input.length, validItems: input.map((_, i) => i), invalidItems: [] };
  if (op === 'delete') return { result: 'success', items: written.map((id) => ({ id })), metadata };
  return { result: 'success', items: await readByIds(database.db, c, ctx, written, parseFields(c, undefined)), metadata };
}

async function applyAll(w: { ctx: AuthContext; db: Executor }, c: Collection, op: Op, items: Item[], rows: Row[], olds: (Row | undefined)[]) {
  const ids: number[] = [];
  for (const [i, item] of items.entries()) {
    const row = rows[i];
    const old = olds[i];
    try {
      await c.rules.fill?.(w, op, item, row, old);
      if (op === 'create') {
        const r = await untyped(w.db).insertInto(c.table).values({ ...row, account_id: w.ctx.accountId }).returning('id').executeTakeFirstOrThrow();
        ids.push(r.id);
      } else if (op === 'update') {
        await untyped(w.db).updateTable(c.table).set(row).where('id', '=', old!.id).where('account_id', '=', w.ctx.accountId).execute();
        ids.push(old!.id);
      } else {
        await untyped(w.db).deleteFrom(c.table).where('id', '=', old!.id).where('account_id', '=', w.ctx.accountId).execute();
        ids.push(old!.id);
      }
      if (op !== 'delete') await saveLists(w, c, ids[i], item);
      await c.rules.after?.(w, op, ids[i], item, row, old);
    } catch (err) {
      const errors: ApiErrorBody[][] = items.map(() => []);
      if (op === 'delete' && isForeignKeyViolation(err)) errors[i].push(validationError('inUse', 'id'));
      else if (isUniqueViolation(err)) errors[i].push(validationError('unique', uniqueField(c, err as Error)));
      else throw err;
      throw new BatchFailed(errors);
    }
  }
  return ids;
}
