import type { Executor } from '../../../db/tx.js';
import { ApiError } from '../../../errors.js';
import { currentEtag, ifMatchHolds } from '../etag.js';
import type { Batch } from './batch.js';

/**
 * `If-Match` on a write whose target has no entity tag (a collection, an action): only `*` (the
 * target exists) can match (RFC 9110 §13.1.1); anything else is 412 and nothing is done, rather
 * than a condition the client relies on being ignored.
 */
export function checkUntaggedIfMatch(ifMatch: string | undefined, target: string): void {
  if (ifMatch !== undefined && !ifMatchHolds(ifMatch, undefined))
    throw new ApiError('preconditionFailed', `${target} has no entity tag: only If-Match: * matches it`);
}

/**
 * In the transaction, just before the rows are written: `If-Match` of an item endpoint against
 * the item as it is now, 412 when it no longer matches (nothing is written). PostgreSQL locks the
 * row until the commit, so of two writes holding the same ETag only the first passes (where
 * writers are serial, as on SQLite, nothing needs locking). A missing item is left to the notFound
 * failure. On the collection's own URL (`POST`, `PATCH`, `DELETE /jobs`) only `*` matches.
 */
export async function checkIfMatch(b: Batch, db: Executor): Promise<void> {
  const { ifMatch, urlId, collection, caller } = b.request;
  if (ifMatch === undefined) return;
  if (urlId === undefined) return checkUntaggedIfMatch(ifMatch, `/${collection.name}`);
  const etag = await currentEtag(db, collection, caller, urlId, { lock: true, access: 'all' });
  if (etag !== undefined && !ifMatchHolds(ifMatch, etag)) throw new ApiError('preconditionFailed');
}
