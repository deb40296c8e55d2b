import { recreate } from './insert.js';
import type { Context, State } from './state.js';

const MAX_PASSES = 5;

/**
 * Relocate descent on a solution: each job taken out and put back at its cheapest feasible
 * position over all routes, kept when the total falls; jobs left out are tried again. Passes
 * until none improves (at most MAX_PASSES), or until the deadline.
 */
export function localSearch(ctx: Context, start: State, deadline = Infinity): State {
  const { m } = ctx;
  let current = start;
  let cost = current.cost(ctx);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let improved = false;
    for (let j = 0; j < m.nJobs; j++) {
      if ((j & 31) === 0 && performance.now() >= deadline) return current;
      const next = current.fork();
      const r = next.routeOf[j];
      if (r >= 0) {
        const route = next.own(r);
        route.jobs.splice(route.jobs.indexOf(j), 1);
        route.update(m);
        next.routeOf[j] = -1;
      }
      recreate(ctx, next, [j], 0);
      const c = next.cost(ctx);
      if (c < cost) {
        current = next;
        cost = c;
        improved = true;
      }
    }
    if (!improved) break;
  }
  return current;
}
