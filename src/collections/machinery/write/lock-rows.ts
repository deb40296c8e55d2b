import { dialectOf, execute, untyped, type Executor } from '../../../db/runner.js';
import type { Row } from '../collection.js';
import type { Batch } from './batch.js';

/**
 * Where writers run side by side (PostgreSQL), in the transaction, before anything is written: one
 * lock order, so two batches never deadlock.
 * - The rows an update or delete will write are locked first, all at once and in id order (`FOR NO
 *   KEY UPDATE`, what an UPDATE takes, so inserts referencing them are not held up; `FOR UPDATE` for
 *   a delete): two batches naming the same rows in different orders queue on the first row they
 *   share instead of each holding one the other needs. Row counts never wait (each connection
 *   writes its own slot, src/db/counted.ts), and the events lock is taken last (docs/events.md).
 * - Before them, what the collection's rules lock first (`lockFirst`: timesheets lock their users'
 *   time, as every crew-time write does).
 * - A batch that also changes rows it does not name, in an order of its own, first takes the
 *   account's lock on the table (a transaction-scoped advisory lock), so such batches of one table
 *   and account run one at a time: deletes (ON DELETE CASCADE and SET NULL), items that set an
 *   association list (link rows, and the row versions at both ends), and collections whose rules
 *   change other rows (`exclusive`, e.g. statuses: a new default clears the old one).
 */
export async function lockRows(b: Batch, db: Executor): Promise<void> {
  const dialect = dialectOf(db);
  if (dialect.serialWriters) return;
  const { collection: c, caller, op } = b.request;
  await c.rules.lockFirst?.({ db, caller, op, items: b.items, ids: b.ids });
  const lists = Object.entries(c.fields)
    .filter(([, f]) => f.kind === 'assocList')
    .map(([name]) => name);
  const others =
    c.rules.exclusive ||
    (op !== 'create' && (op === 'delete' || b.items.some((it) => lists.some((name) => it[name] !== undefined))));
  if (others) await dialect.lockKey(db, c.table, caller.accountId);
  if (op === 'create' || !b.ids.length) return;
  // The rows come whole: the next step reads them from here instead of a second round trip.
  const q = untyped(db)
    .selectFrom(c.table)
    .selectAll()
    .where('account_id', '=', caller.accountId)
    .where('id', 'in', [...new Set(b.ids)])
    .orderBy('id');
  const rows = await execute(db, q.modifyEnd(dialect.lockClause(op === 'delete' ? 'update' : 'no key update')));
  b.locked = new Map(rows.map((r) => [r.id as number, r as Row]));
}
