import { withTransaction, type Executor } from '../../../db/tx.js';
import { ApiError } from '../../../errors.js';
import type { Caller } from '../collection.js';
import { itemToRow } from '../validate.js';
import { lockRows } from './lock-rows.js';
import type { Services } from '../services.js';
import { applyAll, isSequential, RetryOneByOne } from './apply.js';
import { authorizeRules, checkJobsSeen, loadAndAuthorize, onSeenJobField, roleAccess } from './authorize.js';
import { Batch, type WriteRequest } from './batch.js';
import { ChangeRecorder, type ChangeHook } from './changes.js';
import type { ChangeRecording, Writer } from '../contracts.js';
import { checkItems, validateRules } from './check-items.js';
import { checkIfMatch } from './if-match.js';
import { BatchFailed, failure, stopOnErrors, success, type WriteResult } from './outcome.js';
import { checkReferences, checkUnique } from './references.js';
import { checkCustomFields, saveUniqueValues } from '../custom.js';

export type { WriteRequest } from './batch.js';
export type { Change, ChangeHook, ChangeType } from './changes.js';
export type { ChangeRecording } from '../contracts.js';
export type { WriteMetadata, WriteResult, WriteSuccess, WriteFailure } from './outcome.js';
export { NO_ITEMS } from './outcome.js';

export const MAX_ITEMS = 100;

export type { Writer } from '../contracts.js';

export interface WriterDeps {
  /** The process's services (the writer is one of them, made last). */
  services: Omit<Services, 'writer'>;
  /** Features that see every change (events); each runs in the transaction of the change. */
  hooks?: ChangeHook[];
}

/**
 * The write pipeline: named steps, each in its own file, over one Batch.
 *  1. checkItems, validateRules (schema, ids, the collection's validate) — before the transaction
 *  2. roleAccess; prepare (what the checks need, such as a DNS answer) — before the transaction
 *  3. when the collection has slowColumns for an item (hashing a password): checkAll outside any
 *     transaction, then those columns made — a batch that fails its checks never pays for them
 *  4. in one transaction: lockRows (one lock order, before any row is read); checkAll
 *     (loadAndAuthorize, authorizeRules, checkReferences, checkUnique, the collection's check,
 *     checkIfMatch); applyAll (fill, write, lists, after; a `sequential` collection's check runs
 *     here, each item's just before its write); the collection's verify; settle the
 *     changes (the hooks run here); the answer; seal
 *  5. after the commit: the collection's committed
 */
export function createWriter(deps: WriterDeps): Writer {
  const { services } = deps;
  const { database, registry } = services;
  const hooks = deps.hooks ?? [];

  async function transact<T>(caller: Caller, fn: (tx: Executor, changes: ChangeRecording) => Promise<T>): Promise<T> {
    return withTransaction(database, async (tx) => {
      const changes = new ChangeRecorder(tx, caller, registry, hooks);
      const out = await fn(tx, changes);
      await changes.settle();
      return out;
    });
  }

  async function write(request: WriteRequest): Promise<WriteResult> {
    const { collection: c, caller, op, input } = request;
    if (input.length > MAX_ITEMS) throw new ApiError('tooManyItems', `at most ${MAX_ITEMS} items`);
    const b = new Batch(request);
    checkItems(b);
    roleAccess(b, registry);
    validateRules(b);
    if (b.errors.some((e) => e.length)) return failure(c, input, b.errors);
    b.rows = b.items.map((it) => (op === 'delete' ? {} : itemToRow(c, it, op, caller.now)));
    if (c.rules.prepare && op !== 'delete')
      await Promise.all(b.items.map((_, i) => c.rules.prepare!({ ...b.itemContext(i), services })));
    const slow =
      c.rules.slowColumns && op !== 'delete' ? b.items.map((_, i) => c.rules.slowColumns!(b.itemContext(i))) : [];

    const attempt = (oneByOne: boolean) =>
      transact(caller, async (tx, changes): Promise<WriteResult> => {
        b.beginAttempt();
        await lockRows(b, tx);
        await checkAll(b, tx, changes);
        await applyAll(b, tx, changes, oneByOne);
        await saveUniqueValues(b, tx);
        if (c.rules.verify) {
          const errors = await c.rules.verify({ db: tx, items: b.items.map((_, i) => b.itemContext(i)) });
          errors.forEach((e, i) => b.errors[i].push(...e));
          stopOnErrors(b.errors);
        }
        await changes.settle();
        const items = op === 'delete' ? b.written.map((id) => ({ id })) : b.written.map((id) => changes.item(c, id)!);
        // What is sealed (an idempotency record) is the answer without the secrets a create shows
        // once: a secret is stored where it is needed, nowhere else. A replay answers without it.
        // Without such a secret the answer is the sealed result itself (its kept text is sent as is).
        const sealed = success(input, items);
        await request.seal?.(tx, sealed);
        const reveal = c.rules.reveal;
        return op === 'create' && reveal
          ? success(
              input,
              items.map((it, i) => ({ ...it, ...reveal(b.rows[i]) })),
            )
          : sealed;
      });

    let result: WriteResult;
    try {
      if (slow.some(Boolean)) {
        // Every check first, outside any transaction and writing nothing, so a batch that would fail
        // (an unknown id, a role, a login taken) costs no hashing; the checks run again in the write.
        b.beginAttempt();
        await checkAll(b, database.db, new ChangeRecorder(database.db, caller, registry, []));
        b.addColumns(await Promise.all(slow.map((work) => work?.())));
      }
      // The database refused a statement that wrote several items: again, one item at a time, to name it.
      result = await attempt(false).catch((err) =>
        err instanceof RetryOneByOne ? attempt(true) : Promise.reject(err),
      );
    } catch (err) {
      if (err instanceof BatchFailed) return failure(c, input, err.errors);
      throw err;
    }
    await c.rules.committed?.({ services, caller, op, ids: b.written, existing: b.existing });
    return result;
  }

  return { write, transact };
}

/**
 * The checks before anything is written: the stored rows and the caller's access to them, the
 * collection's `authorize`, references, unique values, its `check`, then `If-Match`.
 */
async function checkAll(b: Batch, db: Executor, changes: ChangeRecording): Promise<void> {
  const { collection: c, op } = b.request;
  await loadAndAuthorize(b, db);
  stopOnErrors(b.errors);
  authorizeRules(b);
  await checkCustomFields(b, db);
  if (op !== 'delete') {
    await checkReferences(b, db);
    await checkUnique(b, db);
  }
  // An item on a job the caller does not see fails before its collection's check reads anything
  // of that job; a job the check derives (a timesheet's, from its visit) is checked after it.
  const all = b.items.map((_, i) => i);
  const refused = new Set(await checkJobsSeen(b, db, all));
  const column = onSeenJobField(c)?.column;
  const before = b.rows.map((r) => (column ? r[column] : undefined));
  // A sequential collection's check runs item by item as it is written (applyAll).
  if (c.rules.check && !isSequential(c))
    for (let i = 0; i < b.items.length; i++)
      if (!refused.has(i)) b.errors[i].push(...(await c.rules.check(b.txContext(i, db, changes))));
  if (column)
    await checkJobsSeen(
      b,
      db,
      all.filter((i) => !refused.has(i) && b.rows[i][column] !== before[i]),
    );
  stopOnErrors(b.errors);
  await checkIfMatch(b, db);
}
