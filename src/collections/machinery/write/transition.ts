import { ApiError } from '../../../errors.js';
import { dialectOf, untyped, type Executor } from '../../../db/runner.js';
import type { ActionAnswer, ActionHandler, ActionRequest, Caller } from '../collection.js';
import type { ChangeRecording } from '../contracts.js';
import { nounsOf } from '../collection.js';
import { NO_ITEMS } from './outcome.js';

/** What a transition's parts are given: the transaction, the item's row as locked, the caller. */
export interface Step<R> {
  tx: Executor;
  row: R;
  caller: Caller;
  changes: ChangeRecording;
  request: ActionRequest;
}

type Maybe<T> = T | Promise<T>;

/**
 * An action that moves one item from a state to another (`POST /invoices/:id/issue`), declared:
 * the machinery locks the item, refuses (422, nothing changed) what the declaration refuses, writes
 * the item's new columns, records every change as a PATCH's are (events, webhooks, streams, the
 * item's version and ETag) and answers the item. Its own file holds no SQL: other items it changes
 * go through their repositories, touched through `changes`.
 */
export interface Transition<R> {
  /** The states the item may be in; any other state, or a deleted item, is refused. */
  from: readonly string[];
  /** What a refusal says the action needs: "only a draft is issued". */
  needs: string;
  /** The state a refusal names, when not the row's `state` (an agreement past its end is 'ended'). */
  stateOf?(step: Step<R>): Maybe<string>;
  /** Further refusals of the locked item: the reason, or undefined. */
  refuse?(step: Step<R>): Maybe<string | undefined>;
  /** Writes of other items that come before the item's own (billing what an agreement owes). */
  first?(step: Step<R>): Maybe<unknown>;
  /** The item's new columns, `state` among them (`modified` is set with them). */
  set(step: Step<R>): Maybe<Record<string, unknown>>;
  /** Writes of other items that follow from the new state (an agreement's future visits). */
  then?(step: Step<R>): Maybe<unknown>;
  /** The refusal's error: 1280 (`stateForbids`) unless the collection has its own. */
  refusal?: 'stateForbids' | 'visitState';
}

type Stateful = { state: string; deleted: number | boolean };

/** The action `name` of `collection`'s items as the declared transition `t`. */
export function transition<R extends Stateful>(collection: string, name: string, t: Transition<R>): ActionHandler {
  return async (request): Promise<ActionAnswer> => {
    const { caller, services } = request;
    const c = services.registry.get(collection)!;
    const { singular } = nounsOf(c);
    if (request.item === undefined)
      throw new ApiError('unknownAction', `'${name}' applies to one ${singular}: POST /${collection}/:id/${name}`);
    const id = request.item;
    const item = await services.writer.transact(caller, async (tx, changes) => {
      const row = (await lockItem(tx, c.table, caller.accountId, id)) as R | undefined;
      if (!row) throw new ApiError('itemNotFound');
      const step: Step<R> = { tx, row, caller, changes, request };
      const state = row.deleted ? 'deleted' : await (t.stateOf?.(step) ?? row.state);
      if (row.deleted || !t.from.includes(state))
        throw new ApiError(t.refusal ?? 'stateForbids', `the ${singular} is ${state}; ${t.needs}`);
      const reason = await t.refuse?.(step);
      if (reason !== undefined) throw new ApiError(t.refusal ?? 'stateForbids', reason);
      await t.first?.(step);
      await changes.touch(c, [id]);
      await setColumns(tx, c.table, caller.accountId, id, { ...(await t.set(step)), modified: caller.now });
      await t.then?.(step);
      await changes.settle();
      return changes.item(c, id)!;
    });
    return { status: 200, body: { result: 'success', [collection]: [item], metadata: NO_ITEMS } };
  };
}

/** An item's row, locked until the transaction ends (`FOR UPDATE` where writers run side by side). */
export function lockItem(tx: Executor, table: string, accountId: number, id: number) {
  return untyped(tx)
    .selectFrom(table)
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .modifyEnd(dialectOf(tx).lockClause('update'))
    .executeTakeFirst();
}

function setColumns(tx: Executor, table: string, accountId: number, id: number, values: Record<string, unknown>) {
  return untyped(tx).updateTable(table).set(values).where('account_id', '=', accountId).where('id', '=', id).execute();
}
