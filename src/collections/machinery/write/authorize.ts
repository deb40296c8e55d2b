import type { Executor } from '../../../db/tx.js';
import { ApiError, validationError } from '../../../errors.js';
import { accessOf, demand, readAccess } from '../access.js';
import { rowsByIds } from '../read.js';
import type { Registry } from '../registry.js';
import type { Collection } from '../collection.js';
import type { AssocField } from '../fields.js';
import type { Batch } from './batch.js';

/**
 * Step 2a, before the transaction: the access the role has for this op (403 when none). An
 * association list is the listed items' data too (a user's `workgroups` are those workgroups'
 * members): setting it needs a role that writes the listed collection as well.
 */
export function roleAccess(b: Batch, registry: Registry): void {
  const { collection: c, caller, op } = b.request;
  const access = c.policy.write[caller.role];
  if (access === 'none') throw new ApiError('roleForbids');
  if (op === 'delete') demand(c, caller, 'delete');
  const valid = b.items.filter((_, i) => !b.errors[i].length);
  for (const [name, field] of Object.entries(c.fields)) {
    if (field.kind !== 'assocList' || !valid.some((it) => it[name] !== undefined)) continue;
    if (field.oneWay) {
      if (registry.get(field.target)?.policy.read[caller.role] === 'none')
        throw new ApiError('roleForbids', `'${name}' lists ${field.target}, which this role does not read`);
    } else if (registry.get(field.target)?.policy.write[caller.role] !== 'all')
      throw new ApiError('roleForbids', `'${name}' changes ${field.target}, which this role does not write`);
  }
  if (
    access === 'own' &&
    op === 'create' &&
    !(c.policy.ownsNew && valid.every((it) => c.policy.ownsNew!(caller, it)))
  ) {
    throw new ApiError('roleForbids');
  }
  b.access = access;
}

/**
 * Step 2b, in the transaction: the stored rows of updates and deletes (an id the caller cannot read
 * is a failure for that item, as if missing), the 'own' scope, then the collection's `authorize`.
 */
export async function loadAndAuthorize(b: Batch, db: Executor): Promise<void> {
  const { collection: c, caller, op } = b.request;
  if (op === 'create') return;
  const access = readAccess(c, caller);
  // Rows locked on PostgreSQL were read whole then, within the account: what 'all' access reads.
  const existing = access === 'all' && b.locked ? b.locked : await rowsByIds(db, c, caller, b.ids, access);
  const owned = b.access === 'own' ? await rowsByIds(db, c, caller, b.ids, 'own') : existing;
  b.items.forEach((_, i) => {
    if (!existing.has(b.ids[i])) b.errors[i].push(validationError('notFound', 'id'));
  });
  b.existing = b.ids.map((id) => existing.get(id));
  if (b.errors.some((e) => e.length)) return;
  if (b.ids.some((id) => !owned.has(id))) throw new ApiError('roleForbids');
}

/**
 * The collection's `authorize` for each item. Logical deletion and restoring are deletions: an
 * update that changes `deleted` is also asked as a delete (of the declared `policy.delete` and of
 * `authorize`), so whoever may not DELETE an item may not PATCH it `deleted` either.
 */
export function authorizeRules(b: Batch): void {
  const { collection: c, caller } = b.request;
  const { authorize } = c.rules;
  const mayDelete = accessOf(c, caller, 'delete') !== 'none';
  if (!authorize && mayDelete) return;
  b.items.forEach((_, i) => {
    const ctx = b.itemContext(i);
    authorize?.(ctx);
    const deleted = ctx.item.deleted;
    if (ctx.op === 'update' && typeof deleted === 'boolean' && deleted !== Boolean(ctx.existing?.deleted)) {
      if (!mayDelete) demand(c, caller, 'delete');
      authorize?.({ ...ctx, op: 'delete' });
    }
  });
}

/**
 * The policy's `onSeenJob` (collection.ts) for the items at `indexes`: the jobs their rows set,
 * read within the caller's scope of `jobs` in one query; an item whose job is outside it fails
 * naming the member. Nothing to do for a caller who reads every job.
 */
export async function checkJobsSeen(b: Batch, db: Executor, indexes: number[]): Promise<number[]> {
  const { collection: c, caller, op } = b.request;
  const field = onSeenJobField(c);
  if (op === 'delete' || !field?.targetCollection) return [];
  const jobs = field.targetCollection;
  if (readAccess(jobs, caller) !== 'own') return [];
  const named = indexes.filter((i) => !b.errors[i].length && b.rows[i][field.column] != null);
  if (!named.length) return [];
  const ids = [...new Set(named.map((i) => Number(b.rows[i][field.column])))];
  const seen = await rowsByIds(db, jobs, caller, ids, 'own');
  const refused = named.filter((i) => !seen.has(Number(b.rows[i][field.column])));
  for (const i of refused) b.errors[i].push(validationError('reference', c.policy.onSeenJob!));
  return refused;
}

/** The association the policy's `onSeenJob` names, when it names one. */
export function onSeenJobField(c: Collection): AssocField | undefined {
  const field = c.policy.onSeenJob !== undefined ? c.fields[c.policy.onSeenJob] : undefined;
  return field?.kind === 'assoc' ? field : undefined;
}
