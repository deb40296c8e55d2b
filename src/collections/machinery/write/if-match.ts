import type { Executor } from '../../../db/tx.js';
import { ApiError } from '../../../errors.js';
import { currentEtag, ifMatchHolds } from '../etag.js';
import type { Batch } from './batch.js';

/**
 * In the transaction, just before the rows are written: `If-Match` of an item endpoint against
 * the item as it is now, 412 when it no longer matches (nothing is written). PostgreSQL locks the
 * row until the commit, so of two writes holding the same ETag only the first passes (where
 * writers are serial, as on SQLite, nothing needs locking). A missing item is left to the notFound failure.
 */
export async function checkIfMatch(b: Batch, db: Executor): Promise<void> {
  const { ifMatch, urlId, collection, caller } = b.request;
  if (ifMatch === undefined || urlId === undefined) return;
  const etag = await currentEtag(db, collection, caller, urlId, { lock: true, access: 'all' });
  if (etag !== undefined && !ifMatchHolds(ifMatch, etag)) throw new ApiError('preconditionFailed');
}
