import { validationError, type ApiErrorBody } from '../../errors.js';

/**
 * The rule of a quote's or an invoice's state (PRODUCT §9), written once for both: a draft changes
 * freely; once it is sent or issued the document is what the client saw, so only `notes` (and the
 * account's own `customFields`, which are not part of the document) change. Every other member a
 * write sends, `job` and `deleted` included, is a failure naming it.
 */
const AFTER_DRAFT = new Set(['id', 'notes', 'customFields']);

export function afterDraftErrors(
  item: Record<string, unknown>,
  state: string,
  noun: 'quote' | 'invoice',
): ApiErrorBody[] {
  if (state === 'draft') return [];
  return Object.keys(item)
    .filter((m) => !AFTER_DRAFT.has(m) && item[m] !== undefined)
    .map((m) => validationError('conflict', m, `the ${noun} is ${state}; only a draft changes (notes always may)`));
}
