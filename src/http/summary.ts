import type { Caller, Collection } from '../collections/machinery/collection.js';
import type { Executor } from '../db/tx.js';
import { parseSummaryQuery } from '../collections/machinery/summary-query.js';
import { summarize } from '../collections/machinery/summary.js';
import type { Answer } from './idempotency/index.js';

/** `GET /<collection>/summary` (PRODUCT §19): a read of the collection, answered as a summary envelope. */
export const SUMMARY = 'summary';

/** Whether the route is a collection's summary (a collection's own action of that name would win). */
export const isSummary = (c: Collection, route: { item?: number; action?: string }): boolean =>
  route.action === SUMMARY && route.item === undefined && !c.actions?.[SUMMARY];

export async function summaryAnswer(
  db: Executor,
  c: Collection,
  caller: Caller,
  query: Record<string, unknown>,
): Promise<Answer> {
  const q = parseSummaryQuery(c, query);
  const { summary, count } = await summarize(db, c, caller, q);
  const metadata = {
    page: q.page,
    pagesCount: Math.ceil(count / q.recordsPerPage),
    recordsPerPage: q.recordsPerPage,
    recordsCount: count,
  };
  return { status: 200, body: { result: 'success', summary, metadata } };
}
