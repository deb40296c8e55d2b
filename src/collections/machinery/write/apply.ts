import { sql } from 'kysely';
import { columnsOf, dialectOf, insertRows, query, slot, untyped, type Executor } from '../../../db/runner.js';
import { validationError, type ApiErrorBody } from '../../../errors.js';
import type { Collection, Columns, Row, TxItemContext } from '../collection.js';
import { listChanges, saveList } from '../links.js';
import type { Batch } from './batch.js';
import type { ChangeRecording } from '../contracts.js';
import { BatchFailed, stopOnErrors } from './outcome.js';
import { fillSearchText } from '../search.js';
import { rowsByIds } from '../read.js';

/** The association a refused foreign key names (PostgreSQL says which column; SQLite does not). */
function referenceField(c: Collection, item: Record<string, unknown>, err: Error): string {
  const text = `${err.message} ${(err as { detail?: string }).detail ?? ''}`;
  const assocs = Object.entries(c.fields).filter(
    ([name, f]) => (f.kind === 'assoc' || f.kind === 'assocList') && item[name] !== undefined,
  );
  const named = assocs.find(([, f]) => f.kind === 'assoc' && new RegExp(`\\b${f.column}\\b`).test(text));
  return (named ?? assocs[0])?.[0] ?? 'id';
}

function uniqueField(c: Collection, err: Error): string {
  const text = `${err.message} ${(err as { detail?: string }).detail ?? ''} ${(err as { constraint?: string }).constraint ?? ''}`;
  for (const [name, field] of Object.entries(c.fields)) {
    if (
      field.kind === 'scalar' &&
      (field.unique || field.uniqueIndex) &&
      new RegExp(`\\b${field.column}\\b`).test(text)
    )
      return name;
  }
  return 'id';
}

/**
 * One row updated, likewise compiled once per table and columns. The row version moves in the same
 * statement: SQLite's trigger (src/db/migrations/scheme.ts) then has nothing to add, instead of a second
 * UPDATE of the row (PostgreSQL's sets it anyway).
 */
async function updateRow(
  db: Executor,
  table: string,
  row: Record<string, unknown>,
  id: number,
  accountId: number,
): Promise<Row | undefined> {
  const cols = columnsOf(row);
  const [updated] = await query<Row>(
    db,
    `update|${table}|${cols.join(',')}`,
    () =>
      untyped(db)
        .updateTable(table)
        .set((eb) => ({ ...Object.fromEntries(cols.map((k) => [k, slot(k)])), version: eb('version', '+', 1) }))
        .where('id', '=', slot<number>('where.id'))
        .where('account_id', '=', slot<number>('where.account'))
        .returningAll(),
    { ...row, 'where.id': id, 'where.account': accountId },
  );
  return updated;
}

/**
 * Thrown when the database refused a statement that wrote several items at once (a unique or
 * foreign key, after a concurrent write): which item it was is found by doing the write again one
 * item at a time (the writer runs the transaction again).
 */
export class RetryOneByOne extends Error {
  constructor() {
    super('a multi-item statement was refused');
  }
}

/**
 * Rows of one table updated by one statement per set of columns: a batch of ten PATCHes is one
 * `UPDATE … FROM` over a JSON array of the rows (the dialect's `rowsFrom`: PostgreSQL's
 * `jsonb_populate_recordset` gives each value its column's type, SQLite's `json_each` each
 * member's value). The row version moves as in updateRow.
 */
async function updateRows(
  db: Executor,
  table: string,
  rows: Record<string, unknown>[],
  ids: number[],
  accountId: number,
): Promise<Row[]> {
  const cols = columnsOf(rows[0]);
  return query<Row>(
    db,
    `updateRows|${table}|${cols.join(',')}`,
    () => {
      const set = [
        ...cols.map((k) => sql`${sql.ref(k)} = r.${sql.ref(k)}`),
        sql`version = ${sql.table(table)}.version + 1`,
      ];
      return sql<Row>`update ${sql.table(table)} set ${sql.join(set)} from ${dialectOf(db).rowsFrom(table, cols, slot('rows'))}
      where ${sql.table(table)}.id = r.id and ${sql.table(table)}.account_id = ${slot<number>('account')} returning ${dialectOf(db).updatedColumns(table)}`.compile(
        db,
      );
    },
    { rows: JSON.stringify(rows.map((row, i) => ({ ...row, id: ids[i] }))), account: accountId },
  );
}

/** Consecutive indexes whose rows set the same columns: each run is written by one statement. */
function runsOfShape(rows: Columns[]): number[][] {
  const runs: number[][] = [];
  let key = '';
  rows.forEach((row, i) => {
    const k = columnsOf(row).join(',');
    if (runs.length && k === key) runs[runs.length - 1].push(i);
    else runs.push([i]);
    key = k;
  });
  return runs;
}

/**
 * Step 4, in the transaction: each item's row (with the collection's `fill` before and `after`
 * after it), its association lists, and the change recorded. A unique or foreign key the database
 * itself enforces turns into a failure of that item, and the whole batch rolls back.
 *
 * Items are written together (every fill, then one INSERT for the batch, or one
 * UPDATE, then the lists and afters) unless the collection's rules change rows of others
 * (`exclusive`: item 2's fill may undo item 1's row) or `oneByOne` asks for the original order of
 * work per item (after a multi-item statement was refused: RetryOneByOne).
 */
export async function applyAll(b: Batch, db: Executor, changes: ChangeRecording, oneByOne = false): Promise<void> {
  const { collection: c, op } = b.request;
  if (op === 'update') await changes.touchRows(c, b.existing as never[]);
  if (op === 'delete') await changes.deleting(c, b.ids);
  const together = !oneByOne && !isSequential(c) && b.items.length > 1 && (op === 'create' || op === 'update');
  if (together) await writeTogether(b, db, changes);
  else if (isSequential(c)) await writeInTurn(b, db, changes);
  else for (let i = 0; i < b.items.length; i++) await guarded(b, db, i, () => writeOne(b, db, changes, i));
}

/** Whether the collection's items are checked one after another, each seeing the writes of those before it. */
export function isSequential(c: Collection): boolean {
  return Boolean(c.rules.sequential || c.rules.exclusive);
}

/**
 * A sequential collection's items in turn: item i is checked once items 0…i-1 are written, so a
 * rule that depends on other rows (a balance, the charges not billed yet) sees what the batch did
 * before it. Once an item fails, the later ones are still checked (each failure is reported) but
 * nothing more is written, and the batch rolls back.
 */
async function writeInTurn(b: Batch, db: Executor, changes: ChangeRecording): Promise<void> {
  const { collection: c, caller, op } = b.request;
  for (let i = 0; i < b.items.length; i++) {
    if (c.rules.exclusive && op !== 'create' && i > 0) {
      // An earlier item's fill may have changed this item's row (statuses: the old default cleared).
      const row = (await rowsByIds(db, c, caller, [b.ids[i]], 'all')).get(b.ids[i]);
      if (row) b.existing[i] = row;
    }
    if (c.rules.check) b.errors[i].push(...(await c.rules.check(b.txContext(i, db, changes))));
    if (b.errors.some((e) => e.length)) continue;
    await guarded(b, db, i, () => writeOne(b, db, changes, i));
  }
  stopOnErrors(b.errors);
}

/** One item: fill, its row, lists, after. */
async function writeOne(b: Batch, db: Executor, changes: ChangeRecording, i: number): Promise<void> {
  const { collection: c, caller, op } = b.request;
  const ctx = b.txContext(i, db, changes);
  const old = b.existing[i];
  await c.rules.fill?.(ctx);
  fillSearchText(b, i);
  let id: number;
  // The row as written: the recorder takes it instead of reading it again, unless a later item's
  // fill may change it (`exclusive` rules change rows the batch does not name, earlier items' too).
  const keep = (row: Row | undefined) => row && !c.rules.exclusive && changes.wrote(c, [row]);
  if (op === 'create') {
    // Compiled once per table and set of columns (src/db/compiled.ts), as the update below.
    const [made] = await insertRows<Row>(untyped(db), c.table, [{ ...ctx.row, account_id: caller.accountId }], '*');
    id = made.id;
    changes.created(c, [id]);
    keep(made);
  } else if (op === 'update') {
    id = old!.id;
    keep(await updateRow(db, c.table, ctx.row, id, caller.accountId));
  } else {
    id = old!.id;
    await untyped(db).deleteFrom(c.table).where('id', '=', id).where('account_id', '=', caller.accountId).execute();
  }
  b.written.push(id);
  await afterWrite(b, db, ctx, id);
}

/** Every item's fill, then their rows by one statement per run of the same columns, then lists and afters. */
async function writeTogether(b: Batch, db: Executor, changes: ChangeRecording): Promise<void> {
  const { collection: c, caller, op } = b.request;
  const contexts = b.items.map((_, i) => b.txContext(i, db, changes));
  if (c.rules.fill) for (const ctx of contexts) await c.rules.fill(ctx);
  b.items.forEach((_, i) => fillSearchText(b, i));
  for (const run of runsOfShape(b.rows)) {
    const rows = run.map((i) => b.rows[i]);
    try {
      // The rows come back whole: the change recorder need not read them again.
      if (op === 'create') {
        const made = await insertRows<Row>(
          untyped(db),
          c.table,
          rows.map((row) => ({ ...row, account_id: caller.accountId })),
          '*',
        );
        changes.created(
          c,
          made.map((r) => r.id),
        );
        changes.wrote(c, made);
        b.written.push(...made.map((r) => r.id));
      } else {
        const ids = run.map((i) => b.existing[i]!.id);
        changes.wrote(c, await updateRows(db, c.table, rows, ids, caller.accountId));
        b.written.push(...ids);
      }
    } catch (err) {
      const dialect = dialectOf(db);
      if (dialect.isForeignKeyViolation(err) || dialect.isUniqueViolation(err)) throw new RetryOneByOne();
      throw err;
    }
  }
  for (let i = 0; i < b.items.length; i++) await guarded(b, db, i, () => afterWrite(b, db, contexts[i], b.written[i]));
}

/** The item's association lists, then the collection's `after`. */
async function afterWrite(b: Batch, db: Executor, ctx: TxItemContext, id: number): Promise<void> {
  const { collection: c, caller, op } = b.request;
  const { item } = ctx;
  if (op !== 'delete') {
    for (const [name, field] of Object.entries(c.fields)) {
      if (field.kind === 'assocList' && Array.isArray(item[name])) {
        const ids = (item[name] as { id: number }[]).map((x) => x.id);
        const change = await listChanges(db, field, caller.accountId, id, ids);
        // The items joining or leaving the list change too (a workgroup's `users`): recorded as theirs.
        if (!field.oneWay) await ctx.changes.touchBeside(field.target, [...change.added, ...change.removed]);
        await saveList(db, field, caller.accountId, id, change);
        ctx.changes.listSaved(c, id);
      }
    }
  }
  if (c.rules.after) await c.rules.after({ ...ctx, id });
}

/** A refusal by the database while writing item i is that item's failure; the batch rolls back. */
async function guarded(b: Batch, db: Executor, i: number, fn: () => Promise<void>): Promise<void> {
  const { collection: c, op } = b.request;
  const item = b.items[i];
  try {
    await fn();
  } catch (err) {
    const errors: ApiErrorBody[][] = b.items.map(() => []);
    const { isForeignKeyViolation, isUniqueViolation } = dialectOf(db);
    if (op === 'delete' && isForeignKeyViolation(err)) errors[i].push(validationError('inUse', 'id'));
    // A referenced item removed by another transaction after the reference check.
    else if (isForeignKeyViolation(err))
      errors[i].push(validationError('reference', referenceField(c, item, err as Error)));
    else if (isUniqueViolation(err)) errors[i].push(validationError('unique', uniqueField(c, err as Error)));
    else throw err;
    throw new BatchFailed(errors);
  }
}
