import type { Executor } from '../../../db/tx.js';
import { ApiError, validationError } from '../../../errors.js';
import { readAccess, rowsByIds } from '../read.js';
import type { Batch } from './batch.js';

/** Step 2a, before the transaction: the access the role has for this op (403 when none). */
export function roleAccess(b: Batch): void {
  const { collection: c, caller, op } = b.request;
  const access = c.policy.write[caller.role];
  if (access === 'none') throw new ApiError('roleForbids');
  const valid = b.items.filter((_, i) => !b.errors[i].length);
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

export function authorizeRules(b: Batch): void {
  const { authorize } = b.request.collection.rules;
  if (authorize) b.items.forEach((_, i) => authorize(b.itemContext(i)));
}
