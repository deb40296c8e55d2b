import type { Context, State } from './state.js';

/**
 * Greedy insertion with blinks (SISR's recreate): each job in turn at its cheapest feasible
 * position over all routes, each position skipped with probability `blink`. A job that fits
 * nowhere stays out.
 */
export function recreate(ctx: Context, st: State, order: number[], blink: number): void {
  const { m, rng } = ctx;
  const n = m.nLocs;
  const dur = m.dur;
  const nV = m.nVehicles;
  // Positions skipped: each with probability `blink`, drawn as the gap to the next skipped one.
  const logKeep = blink > 0 ? Math.log(1 - blink) : 0;
  const gap = () => (blink > 0 ? Math.floor(Math.log(1 - rng()) / logKeep) : Infinity);
  let untilBlink = gap();
  for (const j of order) {
    if (!ctx.servable[j]) continue;
    const jl = m.jobLoc[j];
    const row = jl * n;
    const svc = m.jobService[j];
    const tw0 = m.twOffset[j];
    const tw1 = m.twOffset[j + 1];
    const single = tw1 - tw0 === 1;
    const open0 = m.twStart[tw0];
    const close0 = m.twEnd[tw0];
    let best = Infinity;
    let bestR = -1;
    let bestP = -1;
    for (let r = 0; r < nV; r++) {
      if (!m.compat[j * nV + r]) continue;
      const route = st.routes[r];
      if (!route.fits(m, j)) continue;
      const { locs, dep, late } = route;
      const len = route.jobs.length;
      for (let p = 0; p <= len; p++) {
        if (untilBlink-- === 0) {
          untilBlink = gap();
          continue;
        }
        const a = locs[p];
        const b = locs[p + 1];
        const toJ = dur[a * n + jl];
        const delta = toJ + dur[row + b] - dur[a * n + b];
        if (delta >= best) continue;
        // The window check of Route.canInsert, inlined.
        const arrival = dep[p] + toJ;
        let s = -1;
        if (single) {
          if (arrival <= close0) s = arrival > open0 ? arrival : open0;
        } else
          for (let k = tw0; k < tw1; k++) {
            if (arrival <= m.twEnd[k]) {
              s = arrival > m.twStart[k] ? arrival : m.twStart[k];
              break;
            }
          }
        if (s < 0) continue;
        if (s + svc + dur[row + b] > late[p + 1]) continue;
        best = delta;
        bestR = r;
        bestP = p;
      }
    }
    if (bestR < 0) continue;
    const route = st.own(bestR);
    route.jobs.splice(bestP, 0, j);
    route.update(m);
    st.routeOf[j] = bestR;
  }
}

/** The cheapest feasible insertion of j into route r: [cost, position], cost Infinity when none. */
function cheapest(ctx: Context, st: State, j: number, r: number): [number, number] {
  const { m } = ctx;
  if (!m.compat[j * m.nVehicles + r]) return [Infinity, -1];
  const route = st.routes[r];
  if (!route.fits(m, j)) return [Infinity, -1];
  const n = m.nLocs;
  const jl = m.jobLoc[j];
  let best = Infinity;
  let bestP = -1;
  for (let p = 0; p <= route.jobs.length; p++) {
    const a = route.locs[p];
    const b = route.locs[p + 1];
    const delta = m.dur[a * n + jl] + m.dur[jl * n + b] - m.dur[a * n + b];
    if (delta < best && route.canInsert(m, j, p)) {
      best = delta;
      bestP = p;
    }
  }
  return [best, bestP];
}

/**
 * Regret-2 insertion from the routes as they are: each step inserts the job whose best route
 * beats its second best by the most (a job with one possible route first), at its cheapest
 * position. O(jobs² × route length): the construction for up to a few hundred jobs.
 */
export function regretInsert(ctx: Context, st: State, jobs: number[]): void {
  const { m } = ctx;
  const nV = m.nVehicles;
  let left = jobs.filter((j) => ctx.servable[j]);
  const cost = new Float64Array(m.nJobs * nV);
  const pos = new Int32Array(m.nJobs * nV);
  const refresh = (j: number, r: number) => {
    const [c, p] = cheapest(ctx, st, j, r);
    cost[j * nV + r] = c;
    pos[j * nV + r] = p;
  };
  for (const j of left) for (let r = 0; r < nV; r++) refresh(j, r);
  while (left.length) {
    let pick = -1;
    let pickR = -1;
    let pickRegret = -Infinity;
    let pickCost = Infinity;
    const still: number[] = [];
    for (const j of left) {
      let b1 = Infinity;
      let b2 = Infinity;
      let r1 = -1;
      for (let r = 0; r < nV; r++) {
        const c = cost[j * nV + r];
        if (c < b1) {
          b2 = b1;
          b1 = c;
          r1 = r;
        } else if (c < b2) b2 = c;
      }
      if (r1 < 0) continue; // fits nowhere now (nor later, under the triangle inequality); SISR offers it again
      still.push(j);
      const regret = (b2 === Infinity ? 1e300 : b2 - b1) + ctx.penalty[j] * 1e-300;
      if (regret > pickRegret || (regret === pickRegret && b1 < pickCost)) {
        pick = j;
        pickR = r1;
        pickRegret = regret;
        pickCost = b1;
      }
    }
    left = still;
    if (pick < 0) break;
    const route = st.own(pickR);
    route.jobs.splice(pos[pick * nV + pickR], 0, pick);
    route.update(m);
    st.routeOf[pick] = pickR;
    left = left.filter((j) => j !== pick);
    for (const j of left) refresh(j, pickR);
  }
}
