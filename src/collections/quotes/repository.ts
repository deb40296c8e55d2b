import type { Executor } from '../../db/runner.js';
import { jobCharges } from '../../domain/billing/document-queries.js';

/** The quotes collection's own queries. */

/** The job's quoted charges (not deleted), in id order: a new quote's lines. */
export function quotedCharges(db: Executor, accountId: number, jobId: number) {
  return jobCharges(db, accountId, jobId).where('stage', '=', 'quoted').execute();
}
