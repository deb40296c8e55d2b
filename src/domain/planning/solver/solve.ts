import { regretInsert, recreate } from './insert.js';
import { localSearch } from './local-search.js';
import { makeRng } from './rng.js';
import { RUIN, ruin } from './ruin.js';
import { makeContext, State, type Context } from './state.js';
import type { Model, Solution, SolveOptions } from './types.js';

/**
 * Simulated annealing temperatures, SISR's 100 → 1, in the problem's unit (legUnit): on Solomon
 * instances at 1000 per coordinate unit that is 100,000 → 1,000.
 */
const T0 = 100;
const TF = 1;
/** Chance of skipping an insertion position (SISR's blink rate γ). */
const BLINK = 0.01;
/** Largest problem built by regret insertion; above it, greedy insertion in SISR's orders. */
const REGRET_MAX_JOBS = 400;

/** The temperatures' unit: a fiftieth of the average duration between two jobs (about 1,000 on Solomon instances). */
function legUnit(m: Model): number {
  const n = m.nLocs;
  const step = Math.max(1, Math.floor(m.nJobs / 200));
  let sum = 0;
  let count = 0;
  for (let i = 0; i < m.nJobs; i += step)
    for (let j = 0; j < m.nJobs; j += step) {
      if (i === j) continue;
      sum += m.dur[m.jobLoc[i] * n + m.jobLoc[j]];
      count++;
    }
  // Solomon's unit: a mean pairwise distance of about 50 coordinate units for T0 = 100 there.
  return count && sum > 0 ? sum / count / 50 : 1;
}

/** SISR's insertion orders: random (4), by demand (4), far from the depot first (2), near first (1). */
function sortRemoved(ctx: Context, removed: number[]): void {
  const { rng } = ctx;
  for (let i = removed.length - 1; i > 0; i--) {
    const k = Math.floor(rng() * (i + 1));
    [removed[i], removed[k]] = [removed[k], removed[i]];
  }
  const pick = rng() * 11;
  if (pick < 4) return;
  if (pick < 8) removed.sort((a, b) => ctx.demandSum[b] - ctx.demandSum[a]);
  else if (pick < 10) removed.sort((a, b) => ctx.depotDistance[b] - ctx.depotDistance[a]);
  else removed.sort((a, b) => ctx.depotDistance[a] - ctx.depotDistance[b]);
}

/**
 * Solves the model: regret (or greedy) insertion, then SISR ruin and recreate with simulated
 * annealing until the time limit (or maxIterations), then local search on the best solution.
 * Objective: serve as many jobs as possible (weighed by priority), then the least travel.
 */
export function solve(m: Model, opts: SolveOptions): Solution {
  const started = performance.now();
  const deadline = started + Math.max(0, opts.timeLimitMs);
  // The last 3 % of the limit are the local search's.
  const searchDeadline = started + 0.97 * Math.max(0, opts.timeLimitMs);
  const rng = makeRng(opts.seed ?? 1);
  const ctx = makeContext(m, rng);
  const all = Array.from({ length: m.nJobs }, (_, j) => j);
  let current = State.empty(m);
  if (m.nJobs <= REGRET_MAX_JOBS) regretInsert(ctx, current, all);
  else {
    sortRemoved(ctx, all);
    recreate(ctx, current, all, 0);
  }
  let currentCost = current.cost(ctx);
  let best = current;
  let bestCost = currentCost;
  const unit = legUnit(m);
  const t0 = T0 * unit;
  const tf = TF * unit;
  const ruined = new Uint8Array(m.nVehicles);
  const maxIt = opts.maxIterations ?? Infinity;
  let it = 0;
  let progress = 0;
  while (it < maxIt && m.nJobs > 0) {
    if ((it & 15) === 0) {
      const now = performance.now();
      if (now >= searchDeadline) break;
      progress = opts.maxIterations ? it / maxIt : (now - started) / (searchDeadline - started);
    }
    it++;
    const temperature = t0 * Math.pow(tf / t0, progress);
    const out = current.unassigned();
    const next = current.fork();
    const removed = ruin(ctx, next, RUIN, ruined);
    for (const j of out) removed.push(j);
    sortRemoved(ctx, removed);
    recreate(ctx, next, removed, BLINK);
    const cost = next.cost(ctx);
    if (cost < currentCost - temperature * Math.log(rng())) {
      current = next;
      currentCost = cost;
      if (cost < bestCost) {
        best = next;
        bestCost = cost;
      }
    }
  }
  best = localSearch(ctx, best, deadline);
  const routes = best.routes.filter((r) => r.jobs.length).map((r) => ({ vehicle: r.vehicle, jobs: r.jobs.slice() }));
  return { routes, unassigned: best.unassigned(), cost: best.travel(), iterations: it };
}
