import { validationError, type ApiErrorBody } from '../../errors.js';
import { makePlan } from '../../domain/planning/plan.js';
import { solveInWorker } from '../../domain/planning/solver/index.js';
import { travelMatrix } from '../../domain/planning/travel.js';
import { defineCollection, type ItemContext, type TxItemContext } from '../machinery/collection.js';
import { apply, discard, planActionDocs } from './actions.js';
import { loadPlan, purgeOldPlans } from './repository.js';
import { planFields } from './schema.js';

/** What `prepare` found wrong with an item (a locked visit listed): `check` answers it. */
const refused = new WeakMap<object, ApiErrorBody[]>();

/** Time kept back from the limit for starting the worker, writing and answering. */
const MARGIN_MS = 400;

const MADE_ONCE = ['date', 'users', 'visits', 'timeLimitSeconds'];

function validate({ op, item, index }: ItemContext<'plans'>): ApiErrorBody[] {
  // Each plan takes a worker and up to its time limit: one per request.
  if (op === 'create' && index > 0)
    return [validationError('invalid', 'date', 'one plan is made per request; send the others apart')];
  if (op === 'update')
    return MADE_ONCE.filter((k) => item[k] !== undefined).map((k) =>
      validationError('conflict', k, 'a plan is made once; make a new plan'),
    );
  if (op !== 'create' || typeof item.date !== 'string') return [];
  const ms = Date.parse(`${item.date}T00:00:00Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== item.date)
    return [validationError('invalid', 'date', 'not a calendar date')];
  return [];
}

/**
 * Makes the plan, outside the transaction (no write lock held while it solves): reads the day,
 * builds the problem, solves it on a worker thread within the time limit, and sets the columns.
 */
async function prepare({ op, item, row, caller, services }: ItemContext<'plans'>): Promise<void> {
  if (op !== 'create' || !services) return;
  const started = Date.now();
  const db = services.database.db;
  const loaded = await loadPlan(
    db,
    caller.accountId,
    item.date as string,
    item.users as { id: number }[] | undefined,
    item.visits as { id: number }[] | undefined,
  );
  if (loaded.errors.length) {
    refused.set(item, loaded.errors);
    return;
  }
  const limitMs = ((item.timeLimitSeconds as number | undefined) ?? 5) * 1000;
  const result = await makePlan(loaded.input!, {
    matrix: (places) =>
      travelMatrix(places, { speedKmh: services.config.travelSpeedKmh, routingUrl: services.config.routingUrl }),
    solve: solveInWorker,
    timeLimitMs: () => limitMs - (Date.now() - started) - MARGIN_MS,
  });
  const iso = (ms: number) => new Date(ms).toISOString();
  const routes = result.routes.map((r) => ({
    ...r,
    steps: r.steps.map((s) => ({ ...s, startTime: iso(s.startTime), endTime: iso(s.endTime) })),
  }));
  Object.assign(row, {
    users: JSON.stringify(loaded.userIds.map((id) => ({ id }))),
    visits: JSON.stringify(loaded.visitIds.map((id) => ({ id }))),
    state: 'proposed',
    routes: JSON.stringify(routes),
    unassigned: JSON.stringify(result.unassigned),
    travel_seconds: result.travelSeconds,
    distance_km: result.distanceKm,
    current_travel_seconds: result.currentTravelSeconds,
    current_distance_km: result.currentDistanceKm,
    warnings: JSON.stringify(result.warnings),
    snapshot: JSON.stringify(loaded.snapshot),
    compute_milliseconds: Date.now() - started,
  });
}

async function check({ op, item }: TxItemContext<'plans'>): Promise<ApiErrorBody[]> {
  return op === 'create' ? (refused.get(item) ?? []) : [];
}

/** Plans are kept 30 days: older ones of the account are purged as a new one is made. */
async function after({ op, db, caller }: TxItemContext<'plans'> & { id: number }): Promise<void> {
  if (op === 'create') await purgeOldPlans(db, caller.accountId, caller.now);
}

/** Plans (PRODUCT §15): a day's routes proposed by the dispatch solver; Administrators and Employees. */
export const plans = defineCollection({
  name: 'plans',
  table: 'plans',
  description:
    "A day's routes proposed by the dispatch solver for the account's users and visits of one date; `apply` moves the visits as planned, `discard` drops it.",
  fields: planFields,
  textField: 'notes',
  example: () => ({ date: '2030-01-07', users: [], visits: [], timeLimitSeconds: 1 }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
    actions: { apply: {}, discard: {} },
  },
  rules: { validate, prepare, check, after },
  actions: { apply, discard },
  actionDocs: planActionDocs,
});
