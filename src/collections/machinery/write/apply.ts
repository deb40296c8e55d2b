import { columnsOf, insertRows, prepared, run, slot } from '../../../db/compiled.js';
import { untyped, type Executor } from '../../../db/tx.js';
import { validationError, type ApiErrorBody } from '../../../http/errors.js';
import type { Collection } from '../collection.js';
import { saveList } from '../links.js';
import type { Batch } from './batch.js';
import type { ChangeRecorder } from './changes.js';
import { BatchFailed } from './outcome.js';

function isUniqueViolation(err: unknown): err is Error {
  const e = err as { code?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A restricting foreign key refused a delete: the row is still referenced elsewhere. */
function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** The association a refused foreign key names (PostgreSQL says which column; SQLite does not). */
function referenceField(c: Collection, item: Record<string, unknown>, err: Error): string {
  const text = `${err.message} ${(err as { detail?: string }).detail ?? ''}`;
  const assocs = Object.entries(c.fields).filter(([name, f]) => (f.kind === 'assoc' || f.kind === 'assocList') && item[name] !== undefined);
  const named = assocs.find(([, f]) => f.kind === 'assoc' && new RegExp(`\\b${f.column}\\b`).test(text));
  return (named ?? assocs[0])?.[0] ?? 'id';
}

function uniqueField(c: Collection, err: Error): string {
  const text = `${err.message} ${(err as { detail?: string }).detail ?? ''} ${(err as { constraint?: string }).constraint ?? ''}`;
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind === 'scalar' && field.unique && new RegExp(`\\b${field.column}\\b`).test(text)) return name;
  }
  return 'id';
}

/**
 * One row updated, likewise compiled once per table and columns. The row version moves in the same
 * statement: SQLite's trigger (src/db/versions.ts) then has nothing to add, instead of a second
 * UPDATE of the row (PostgreSQL's sets it anyway).
 */
async function updateRow(db: Executor, table: string, row: Record<string, unknown>, id: number, accountId: number): Promise<void> {
  const cols = columnsOf(row);
  const q = prepared(db, `update|${table}|${cols.join(',')}`, () =>
    untyped(db).updateTable(table).set((eb) => ({ ...Object.fromEntries(cols.map((k) => [k, slot(k)])), version: eb('version', '+', 1) }))
      .where('id', '=', slot<number>('where.id')).where('account_id', '=', slot<number>('where.account')).compile());
  await run(db, q.bind({ ...row, 'where.id': id, 'where.account': accountId }));
}

/**
 * Step 4, in the transaction: each item's row (with the collection's `fill` before and `after`
 * after it), its association lists, and the change recorded. A unique or foreign key the database
 * itself enforces turns into a failure of that item, and the whole batch rolls back.
 */
export async function applyAll(b: Batch, db: Executor, changes: ChangeRecorder): Promise<void> {
  const { collection: c, caller, op } = b.request;
  if (op === 'update') await changes.touchRows(c, b.existing as never[]);
  if (op === 'delete') await changes.deleting(c, b.ids);
  for (const [i, item] of b.items.entries()) {
    const ctx = b.txContext(i, db, changes);
    const old = b.existing[i];
    try {
      await c.rules.fill?.(ctx);
      let id: number;
      if (op === 'create') {
        // Compiled once per table and set of columns (src/db/compiled.ts), as the update below.
        [{ id }] = await insertRows<{ id: number }>(untyped(db), c.table, [{ ...ctx.row, account_id: caller.accountId }], ['id']);
        changes.created(c, [id]);
      } else if (op === 'update') {
        id = old!.id;
        await updateRow(db, c.table, ctx.row, id, caller.accountId);
      } else {
        id = old!.id;
        await untyped(db).deleteFrom(c.table).where('id', '=', id).where('account_id', '=', caller.accountId).execute();
      }
      b.written.push(id);
      if (op !== 'delete') {
        for (const [name, field] of Object.entries(c.fields)) {
          if (field.kind === 'assocList' && Array.isArray(item[name])) {
            await saveList(db, field, caller.accountId, id, (item[name] as { id: number }[]).map((x) => x.id));
          }
        }
      }
      await c.rules.after?.({ ...ctx, id });
    } catch (err) {
      const errors: ApiErrorBody[][] = b.items.map(() => []);
      if (op === 'delete' && isForeignKeyViolation(err)) errors[i].push(validationError('inUse', 'id'));
      // A referenced item removed by another transaction after the reference check.
      else if (isForeignKeyViolation(err)) errors[i].push(validationError('reference', referenceField(c, item, err as Error)));
      else if (isUniqueViolation(err)) errors[i].push(validationError('unique', uniqueField(c, err as Error)));
      else throw err;
      throw new BatchFailed(errors);
    }
  }
}
