import type { ApiErrorBody } from '../../../errors.js';
import type { Collection, Item } from '../collection.js';
import { rawData } from '../validate.js';
import type { WriteFailure, WriteMetadata, WriteSuccess } from '../contracts.js';

export type { WriteFailure, WriteMetadata, WriteResult, WriteSuccess } from '../contracts.js';

/** Thrown inside the transaction to roll everything back and answer with the failure envelope. */
export class BatchFailed extends Error {
  constructor(readonly errors: ApiErrorBody[][]) {
    super('batch failed');
  }
}

/** Throws BatchFailed when any item has an error. */
export function stopOnErrors(errors: ApiErrorBody[][]): void {
  if (errors.some((e) => e.length)) throw new BatchFailed(errors);
}

/** The failure envelope: each failed item with its errors, both index lists. */
export function failure(c: Collection, input: unknown[], errors: ApiErrorBody[][]): WriteFailure {
  const invalid = errors.flatMap((e, i) => (e.length ? [i] : []));
  return {
    result: 'failure',
    failures: invalid.map((i) => ({ rawData: rawData(c, input[i]), errors: errors[i] })),
    metadata: {
      receivedItemsCount: input.length,
      validItems: errors.flatMap((e, i) => (e.length ? [] : [i])),
      invalidItems: invalid,
    },
  };
}

/** The metadata of an action's answer: it took no items (spec §2.2: metadata in every non-error answer). */
export const NO_ITEMS: WriteMetadata = Object.freeze({
  receivedItemsCount: 0,
  validItems: [],
  invalidItems: [],
}) as WriteMetadata;

export function success(input: unknown[], items: Item[]): WriteSuccess {
  return {
    result: 'success',
    items,
    metadata: { receivedItemsCount: input.length, validItems: input.map((_, i) => i), invalidItems: [] },
  };
}
