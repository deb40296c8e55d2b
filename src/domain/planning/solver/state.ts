import type { Rng } from './rng.js';
import { Route } from './routes.js';
import type { Model } from './types.js';

/** What the search needs besides the model: the generator, the penalties, the neighbour lists. */
export interface Context {
  m: Model;
  rng: Rng;
  /** Cost of leaving job j out: above any saving in travel, higher for higher priorities. */
  penalty: Float64Array;
  /** For each job, the other jobs by increasing duration from it (the NEIGHBOURS nearest). */
  neighbours: Int32Array[];
  /** Distance of each job from the nearest vehicle start (the "depot" of the insertion orders). */
  depotDistance: Float64Array;
  /** Sum of each job's deliveries (the "demand" insertion order). */
  demandSum: Float64Array;
  /** Whether some vehicle may take the job (skills and capacity alone). */
  servable: Uint8Array;
}

const NEIGHBOURS = 100;

/** Moves the k smallest values of a to its first k places (Hoare's selection, in place). */
function select(a: Float64Array, k: number): void {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}

export function makeContext(m: Model, rng: Rng): Context {
  const n = m.nLocs;
  const { nJobs, nVehicles, dims } = m;
  let maxD = 1;
  for (let i = 0; i < m.dur.length; i++) if (m.dur[i] > maxD) maxD = m.dur[i];
  // Any solution's travel is below (jobs + 2 vehicles) legs of the longest leg: one more served
  // job always outweighs it, and a job of priority p weighs as 1 + 100 p jobs of priority 0.
  const unit = maxD * (nJobs + 2 * nVehicles + 2);
  const penalty = new Float64Array(nJobs);
  for (let j = 0; j < nJobs; j++) penalty[j] = unit * (1 + 100 * m.priority[j]);
  const k = Math.max(0, Math.min(NEIGHBOURS, nJobs - 1));
  const neighbours: Int32Array[] = [];
  const keys = new Float64Array(Math.max(0, nJobs - 1));
  const scale = 2 ** Math.ceil(Math.log2(nJobs + 1));
  for (let i = 0; i < nJobs; i++) {
    const li = m.jobLoc[i];
    let c = 0;
    for (let j = 0; j < nJobs; j++) {
      if (j === i) continue;
      const lj = m.jobLoc[j];
      keys[c++] = m.dur[li * n + lj] * scale + j;
    }
    if (k < c) select(keys, k);
    keys.subarray(0, k).sort();
    const list = new Int32Array(k);
    for (let x = 0; x < k; x++) list[x] = keys[x] % scale;
    neighbours.push(list);
  }
  const depotDistance = new Float64Array(nJobs);
  const demandSum = new Float64Array(nJobs);
  const servable = new Uint8Array(nJobs);
  for (let j = 0; j < nJobs; j++) {
    let best = Infinity;
    for (let v = 0; v < nVehicles; v++) {
      if (m.vHasStart[v]) best = Math.min(best, m.dur[m.vStart[v] * n + m.jobLoc[j]]);
      if (!m.compat[j * nVehicles + v]) continue;
      let fits = true;
      for (let d = 0; d < dims; d++) if (m.demand[j * dims + d] > m.capacity[v * dims + d]) fits = false;
      if (fits) servable[j] = 1;
    }
    depotDistance[j] = best === Infinity ? 0 : best;
    for (let d = 0; d < dims; d++) demandSum[j] += m.demand[j * dims + d];
  }
  return { m, rng, penalty, neighbours, depotDistance, demandSum, servable };
}

/**
 * A solution being changed. Routes are shared with the state it was forked from until changed:
 * `own(r)` copies route r on its first change, so forking costs one array copy.
 */
export class State {
  constructor(
    public routes: Route[],
    public routeOf: Int32Array,
    private owned: Uint8Array,
  ) {}

  static empty(m: Model): State {
    const routes: Route[] = [];
    for (let v = 0; v < m.nVehicles; v++) {
      const r = new Route(v, m.dims);
      r.update(m);
      routes.push(r);
    }
    return new State(routes, new Int32Array(m.nJobs).fill(-1), new Uint8Array(m.nVehicles).fill(1));
  }

  fork(): State {
    return new State(this.routes.slice(), this.routeOf.slice(), new Uint8Array(this.routes.length));
  }

  own(r: number): Route {
    if (!this.owned[r]) {
      this.routes[r] = this.routes[r].clone();
      this.owned[r] = 1;
    }
    return this.routes[r];
  }

  travel(): number {
    let t = 0;
    for (const r of this.routes) t += r.cost;
    return t;
  }

  cost(ctx: Context): number {
    let c = this.travel();
    for (let j = 0; j < this.routeOf.length; j++) if (this.routeOf[j] < 0) c += ctx.penalty[j];
    return c;
  }

  unassigned(): number[] {
    const out: number[] = [];
    for (let j = 0; j < this.routeOf.length; j++) if (this.routeOf[j] < 0) out.push(j);
    return out;
  }
}
