import { ApiError } from '../../../errors.js';
import { dialectOf, untyped, type Executor } from '../../../db/runner.js';
import type { ActionAnswer, ActionHandler, ActionRequest, Caller, Collection, Row } from '../collection.js';
import { readAccess } from '../access.js';
import { scope } from '../read.js';
import type { ChangeRecording } from '../contracts.js';
import { nounsOf } from '../collection.js';
import { NO_ITEMS } from './outcome.js';

/** What a transition's parts are given: the transaction, the item's row as locked, the caller. */
export interface Step<R, I = undefined> {
  tx: Executor;
  row: R;
  caller: Caller;
  changes: ChangeRecording;
  request: ActionRequest;
  /** What `prepare` found before the transaction. */
  input: I;
  /**
   * When the change happens, its `modified`: the caller's now, unless a part moves it later (a
   * check-in that waited for its user's time starts after the entry the one before it started).
   */
  at: number;
}

/** An answer a part of a transition gives instead of going on (a body that fails validation: 422). */
export class Answered extends Error {
  constructor(readonly answer: ActionAnswer) {
    super('answered');
  }
}

type Maybe<T> = T | Promise<T>;

/**
 * An action that moves one item from a state to another (`POST /invoices/:id/issue`), declared:
 * the machinery locks the item within the caller's read scope (the access layer's: any other is
 * 404, as reading it would be), refuses (422, nothing changed) what the declaration refuses, writes
 * the item's new columns, records every change as a PATCH's are (events, webhooks, streams, the
 * item's version and ETag) and answers the item. Its own file holds no SQL: other items it changes
 * go through their repositories, touched through `changes`.
 */
export interface Transition<R, I = undefined> {
  /**
   * What the action needs that is not to be had inside the transaction (a route's travel time),
   * found first, for the item `id`; it may answer 404 as reading the item would.
   */
  prepare?(request: ActionRequest, id: number): Promise<I>;
  /**
   * The request's body checked, once the caller is known to see the item (one they may not read
   * is 404 whatever it sends): throws `Answered` to refuse it.
   */
  parse?(step: Step<R, I>): void;
  /** The row lock: `update` (the default) also holds off new rows referencing the item. */
  lock?: 'update' | 'no key update';
  /** The states the item may be in; any other state, or a deleted item, is refused. */
  from: readonly string[];
  /** What a refusal says the action needs: "only a draft is issued". */
  needs: string;
  /** The state a refusal names, when not the row's `state` (an agreement past its end is 'ended'). */
  stateOf?(step: Step<R, I>): Maybe<string>;
  /** Further refusals of the locked item: the reason, or undefined. */
  refuse?(step: Step<R, I>): Maybe<string | undefined>;
  /** Writes of other items that come before the item's own (billing what an agreement owes). */
  first?(step: Step<R, I>): Maybe<unknown>;
  /** The item's new columns, `state` among them (`modified`, the step's `at`, is set with them). */
  set(step: Step<R, I>): Maybe<Record<string, unknown>>;
  /** Writes of other items that follow from the new state (an agreement's future visits). */
  then?(step: Step<R, I>): Maybe<unknown>;
  /** What follows once it is committed, outside the transaction (telling the client). */
  told?(step: Omit<Step<R, I>, 'tx' | 'changes'>): Promise<void>;
  /** The refusal's error: 1280 (`stateForbids`) unless the collection has its own. */
  refusal?: 'stateForbids' | 'visitState';
}

type Stateful = { state: string; deleted: number | boolean };

/** The action `name` of `collection`'s items as the declared transition `t`. */
export function transition<R extends Stateful, I = undefined>(
  collection: string,
  name: string,
  t: Transition<R, I>,
): ActionHandler {
  return async (request): Promise<ActionAnswer> => {
    const { caller, services } = request;
    const c = services.registry.get(collection)!;
    const { singular } = nounsOf(c);
    if (request.item === undefined)
      throw new ApiError('unknownAction', `'${name}' applies to one ${singular}: POST /${collection}/:id/${name}`);
    const id = request.item;
    const input = (t.prepare ? await t.prepare(request, id) : undefined) as I;
    let seen: Step<R, I> | undefined;
    const answered = await services.writer
      .transact(caller, async (tx, changes) => {
        const row = (await itemInScope(tx, c, caller, id, t.lock ?? 'update')) as R | undefined;
        const step: Step<R, I> | undefined = row && { tx, row, caller, changes, request, input, at: caller.now };
        if (!step) throw new ApiError('itemNotFound');
        t.parse?.(step);
        const state = step.row.deleted ? 'deleted' : await (t.stateOf?.(step) ?? step.row.state);
        if (step.row.deleted || !t.from.includes(state))
          throw new ApiError(t.refusal ?? 'stateForbids', `the ${singular} is ${state}; ${t.needs}`);
        const reason = await t.refuse?.(step);
        if (reason !== undefined) throw new ApiError(t.refusal ?? 'stateForbids', reason);
        // The item as it was locked is what it was before: no second read.
        await changes.touchRows(c, [step.row as unknown as Row]);
        await t.first?.(step);
        await setColumns(tx, c.table, caller.accountId, id, { ...(await t.set(step)), modified: step.at });
        await t.then?.(step);
        await changes.settle();
        seen = step;
        return changes.item(c, id)!;
      })
      .catch((err: unknown) => {
        if (err instanceof Answered) return err;
        throw err;
      });
    if (answered instanceof Answered) return answered.answer;
    const item = answered;
    await t.told?.({ row: seen!.row, caller, request, input, at: seen!.at });
    return { status: 200, body: { result: 'success', [collection]: [item], metadata: NO_ITEMS } };
  };
}

/**
 * An item's row within what the caller may read (the collection's declared scope: a Contractor's
 * own visits), or undefined. With `lock`, it stays locked until the transaction ends (where
 * writers run side by side); without, it is read as it is (what an action finds before its
 * transaction).
 */
export function itemInScope(
  tx: Executor,
  c: Collection,
  caller: Caller,
  id: number,
  lock?: 'update' | 'no key update',
) {
  const q = untyped(tx)
    .selectFrom(c.table)
    .selectAll()
    .where((eb) => eb.and([scope(c, caller, eb, readAccess(c, caller)), eb(`${c.table}.id`, '=', id)]));
  return (lock ? q.modifyEnd(dialectOf(tx).lockClause(lock)) : q).executeTakeFirst();
}

function setColumns(tx: Executor, table: string, accountId: number, id: number, values: Record<string, unknown>) {
  return untyped(tx).updateTable(table).set(values).where('account_id', '=', accountId).where('id', '=', id).execute();
}
