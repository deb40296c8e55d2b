import { ApiError } from '../../errors.js';
import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { lockPlan, moveVisit, sameSnapshot, setPlanState, snapshotOf, type Snapshot } from './repository.js';
import { accountZone } from '../machinery/money.js';

interface StoredRoute {
  user: { id: number };
  steps: { visit: { id: number }; startTime: string; endTime: string }[];
}

const itemOf = (request: ActionRequest, name: string): number => {
  if (request.item === undefined)
    throw new ApiError('unknownAction', `'${name}' applies to one plan: POST /plans/:id/${name}`);
  return request.item;
};

/**
 * `POST /plans/:id/apply`: a proposed plan's routed visits get their user, start and end, and the
 * plan becomes `applied`, in one transaction (an event per visit and one for the plan). When any
 * of its users or visits, or their leave or other visits of the date, changed after it was made,
 * no visit changes: the plan becomes `stale` (committed) and the answer is the 422 state refusal.
 */
export async function apply(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'apply');
  const { caller, services } = request;
  const plans = services.registry.get('plans')!;
  const visits = services.registry.get('visits')!;
  const { accountId } = caller;
  const outcome = await services.writer.transact(caller, async (tx, changes) => {
    const plan = await lockPlan(tx, accountId, id);
    if (!plan) throw new ApiError('itemNotFound');
    if (plan.state !== 'proposed' || plan.deleted)
      throw new ApiError(
        'stateForbids',
        `the plan is ${plan.deleted ? 'deleted' : plan.state}; only a proposed plan is applied`,
      );
    const userIds = (JSON.parse(plan.users) as { id: number }[]).map((u) => u.id);
    const visitIds = (JSON.parse(plan.visits) as { id: number }[]).map((v) => v.id);
    const zone = await accountZone(tx, accountId);
    const now = await snapshotOf(tx, accountId, userIds, visitIds, plan.date, zone, true);
    if (!sameSnapshot(JSON.parse(plan.snapshot) as Snapshot, now)) {
      await changes.touch(plans, [id]);
      await setPlanState(tx, accountId, id, 'stale', caller.now);
      return 'stale' as const;
    }
    const steps = (JSON.parse(plan.routes) as StoredRoute[]).flatMap((r) =>
      r.steps.map((s) => ({
        id: s.visit.id,
        user: r.user.id,
        start: Date.parse(s.startTime),
        end: Date.parse(s.endTime),
      })),
    );
    steps.sort((a, b) => a.id - b.id);
    if (steps.length)
      await changes.touch(
        visits,
        steps.map((s) => s.id),
      );
    for (const s of steps) await moveVisit(tx, accountId, s, caller.now);
    await changes.touch(plans, [id]);
    await setPlanState(tx, accountId, id, 'applied', caller.now);
    await changes.settle();
    return changes.item(plans, id)!;
  });
  if (outcome === 'stale')
    throw new ApiError(
      'stateForbids',
      'a user or visit of the plan (or their leave or other visits) changed after it was made; the plan is now stale',
    );
  return { status: 200, body: { result: 'success', plans: [outcome], metadata: NO_ITEMS } };
}

/** `POST /plans/:id/discard`: a proposed plan becomes `discarded`; nothing else changes. */
export async function discard(request: ActionRequest): Promise<ActionAnswer> {
  const id = itemOf(request, 'discard');
  const { caller, services } = request;
  const plans = services.registry.get('plans')!;
  const item = await services.writer.transact(caller, async (tx, changes) => {
    const plan = await lockPlan(tx, caller.accountId, id);
    if (!plan) throw new ApiError('itemNotFound');
    if (plan.state !== 'proposed' || plan.deleted)
      throw new ApiError(
        'stateForbids',
        `the plan is ${plan.deleted ? 'deleted' : plan.state}; only a proposed plan is discarded`,
      );
    await changes.touch(plans, [id]);
    await setPlanState(tx, caller.accountId, id, 'discarded', caller.now);
    await changes.settle();
    return changes.item(plans, id)!;
  });
  return { status: 200, body: { result: 'success', plans: [item], metadata: NO_ITEMS } };
}

export const planActionDocs: Record<string, ActionDoc> = {
  apply: {
    on: 'item',
    summary: 'Apply a proposed plan',
    description:
      "Sets every routed visit's `user`, `startTime` and `endTime` and the plan's `state` `applied`, in one transaction (an event per visit). If any of the plan's users or visits, their unavailabilities or their other visits of the date changed after the plan was made, nothing changes but the plan's `state`, which becomes `stale`: 422, code 1280. A plan not `proposed`: 422, code 1280.",
  },
  discard: {
    on: 'item',
    summary: 'Discard a proposed plan',
    description: 'A `proposed` plan becomes `discarded`; no visit changes. Otherwise 422, code 1280.',
  },
};
