import { untyped, type Executor } from '../../../db/tx.js';
import { validationError } from '../../../errors.js';
import type { Item } from '../collection.js';
import type { Batch } from './batch.js';

const idsOf = (v: unknown, list: boolean): number[] => {
  if (v === undefined || v === null) return [];
  return list ? (v as { id: number }[]).map((x) => x.id) : [(v as { id: number }).id];
};

/** Step 3a, in the transaction: every association names an item of the caller's account (and meets its filter). */
export async function checkReferences(b: Batch, db: Executor): Promise<void> {
  const { collection: c, caller } = b.request;
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind !== 'assoc' && field.kind !== 'assocList') continue;
    const list = field.kind === 'assocList';
    // The caller's own account exists (a user's `account` names it): nothing to look up.
    const wanted = [...new Set(b.items.flatMap((it) => idsOf(it[name], list)))].filter(
      (id) => !(field.table === 'accounts' && id === caller.accountId),
    );
    if (!wanted.length) continue;
    const accountColumn = field.kind === 'assoc' ? field.accountColumn : 'account_id';
    let q = untyped(db)
      .selectFrom(field.table)
      .select('id')
      .where('id', 'in', wanted)
      .where(accountColumn, '=', caller.accountId);
    for (const [col, val] of Object.entries(field.kind === 'assoc' ? (field.referenceFilter ?? {}) : {}))
      q = q.where(col, '=', val);
    const found = new Set((await q.execute()).map((r) => r.id as number));
    b.items.forEach((it, i) => {
      if (idsOf(it[name], list).some((id) => !found.has(id))) b.errors[i].push(validationError('reference', name));
    });
  }
}

/** Step 3b: unique fields, within the batch and against the stored rows (the unique index has the last word). */
export async function checkUnique(b: Batch, db: Executor): Promise<void> {
  const { collection: c, caller } = b.request;
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind !== 'scalar' || !field.unique) continue;
    const seen = new Map<unknown, number>();
    const values = b.items.flatMap((it: Item, i) =>
      it[name] === undefined || it[name] === null ? [] : [[i, it[name]] as const],
    );
    for (const [i, v] of values) {
      if (seen.has(v)) b.errors[i].push(validationError('duplicate', name));
      seen.set(v, i);
    }
    if (!values.length) continue;
    const global = field.unique === 'account' ? undefined : field.unique;
    let q = untyped(db)
      .selectFrom(global?.table ?? c.table)
      .select([`${global?.id ?? 'id'} as id`, field.column])
      .where(
        field.column,
        'in',
        values.map(([, v]) => v),
      );
    if (!global) q = q.where('account_id', '=', caller.accountId);
    const taken = await q.execute();
    for (const [i, v] of values) {
      if (taken.some((t) => t[field.column] === v && t.id !== b.existing[i]?.id))
        b.errors[i].push(validationError('unique', name));
    }
  }
}
