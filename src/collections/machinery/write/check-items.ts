import { validationError, type ApiErrorBody } from '../../../errors.js';
import type { Item } from '../collection.js';
import { validateItem } from '../validate.js';
import type { Batch } from './batch.js';

/**
 * Step 1, before the transaction: each item against its collection's schema, the ids of updates
 * and deletes (once each, the URL's own on an item endpoint), then the collection's `validate`.
 */
export function checkItems(b: Batch): void {
  const { collection: c, op, input } = b.request;
  input.forEach((it, i) => b.errors[i].push(...validateItem(c, it, op)));
  b.items = input as Item[];
  b.ids = op === 'create' ? [] : b.items.map((it, i) => (b.errors[i].length ? 0 : (it.id as number)));
  b.ids.forEach((id, i) => {
    if (id && b.request.urlId !== undefined && id !== b.request.urlId)
      b.errors[i].push(validationError('invalid', 'id', 'must be the id in the URL'));
    else if (id && b.ids.indexOf(id) !== i) b.errors[i].push(validationError('duplicate', 'id'));
  });
}

/** The collection's own `validate`, for items that passed the schema. */
export function validateRules(b: Batch): void {
  const { validate } = b.request.collection.rules;
  if (!validate || b.request.op === 'delete') return;
  b.items.forEach((_, i) => {
    if (!b.errors[i].length) b.errors[i].push(...(validate(b.itemContext(i)) as ApiErrorBody[]));
  });
}
