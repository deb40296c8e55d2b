import { randInt } from './rng.js';
import type { Context, State } from './state.js';

/** SISR's ruin parameters (Christiaens & Vanden Berghe 2020, table 4). */
export interface RuinParams {
  /** Average number of jobs removed (c̄). */
  avgRemoved: number;
  /** Longest string removed (L^max). */
  maxString: number;
  /** Chance of a split string instead of a string. */
  splitRate: number;
  /** Chance of stopping to grow the kept part of a split string at each step (β). */
  splitDepth: number;
}

export const RUIN: RuinParams = { avgRemoved: 10, maxString: 10, splitRate: 0.5, splitDepth: 0.01 };

/**
 * Adjacent string removal: from a random served job, walk its neighbours; in the route of each
 * (one string per route, up to k_s routes) remove a string of consecutive jobs around it, or a
 * split string (a longer string with a kept substring in it). Returns the jobs removed.
 */
export function ruin(ctx: Context, st: State, p: RuinParams, ruined: Uint8Array): number[] {
  const { m, rng } = ctx;
  let served = 0;
  let used = 0;
  for (const r of st.routes)
    if (r.jobs.length) {
      served += r.jobs.length;
      used++;
    }
  if (!served) return [];
  const lsMax = Math.min(p.maxString, served / used);
  const ksMax = (4 * p.avgRemoved) / (1 + lsMax) - 1;
  const ks = Math.floor(rng() * ksMax) + 1;
  let seed = randInt(rng, 0, m.nJobs - 1);
  while (st.routeOf[seed] < 0) seed = (seed + 1) % m.nJobs;
  ruined.fill(0);
  const removed: number[] = [];
  let count = 0;
  const neighbours = ctx.neighbours[seed];
  for (let x = -1; x < neighbours.length && count < ks; x++) {
    const c = x < 0 ? seed : neighbours[x];
    const r = st.routeOf[c];
    if (r < 0 || ruined[r]) continue;
    ruined[r] = 1;
    count++;
    const route = st.own(r);
    const t = route.jobs.length;
    const l = Math.floor(rng() * Math.min(t, lsMax)) + 1;
    const at = route.jobs.indexOf(c);
    let take: number[];
    if (l === t || rng() >= p.splitRate) {
      const start = randInt(rng, Math.max(0, at - l + 1), Math.min(at, t - l));
      take = route.jobs.splice(start, l);
    } else {
      let kept = 1;
      while (l + kept < t && rng() >= p.splitDepth) kept++;
      const total = l + kept;
      const start = randInt(rng, Math.max(0, at - total + 1), Math.min(at, t - total));
      const keptAt = randInt(rng, 0, l);
      const segment = route.jobs.slice(start, start + total);
      take = [...segment.slice(0, keptAt), ...segment.slice(keptAt + kept)];
      route.jobs.splice(start, total, ...segment.slice(keptAt, keptAt + kept));
    }
    route.update(ctx.m);
    for (const j of take) {
      st.routeOf[j] = -1;
      removed.push(j);
    }
  }
  return removed;
}
