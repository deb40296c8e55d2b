import type { Model } from './types.js';

/** The earliest service start at job j when arriving at `arrival`, or -1 when every window has closed. */
export function serviceStart(m: Model, j: number, arrival: number): number {
  const end = m.twOffset[j + 1];
  for (let k = m.twOffset[j]; k < end; k++) {
    if (arrival <= m.twEnd[k]) return arrival > m.twStart[k] ? arrival : m.twStart[k];
  }
  return -1;
}

/** The latest service start at job j not after `bound` and inside a window, or -Infinity. */
export function latestStart(m: Model, j: number, bound: number): number {
  for (let k = m.twOffset[j + 1] - 1; k >= m.twOffset[j]; k--) {
    if (m.twStart[k] <= bound) return bound < m.twEnd[k] ? bound : m.twEnd[k];
  }
  return -Infinity;
}

/**
 * One vehicle's route with Savelsbergh's bookkeeping for O(1) insertion checks. Positions run
 * from 0 (the start) through the jobs (1..len) to len + 1 (the end): `locs` their locations,
 * `dep` the earliest departure (service start + service; at 0 the vehicle's window start, at the
 * end the arrival), `late` the latest service start that keeps the rest of the route feasible
 * (at the end the vehicle's window end). `load` is the sum of the jobs' deliveries.
 */
export class Route {
  jobs: number[];
  locs: Int32Array;
  dep: Float64Array;
  late: Float64Array;
  load: Float64Array;
  cost = 0;

  constructor(
    readonly vehicle: number,
    dims: number,
    jobs: number[] = [],
  ) {
    this.jobs = jobs;
    const size = Math.max(8, jobs.length + 2);
    this.locs = new Int32Array(size);
    this.dep = new Float64Array(size);
    this.late = new Float64Array(size);
    this.load = new Float64Array(dims);
  }

  clone(): Route {
    const r = new Route(this.vehicle, this.load.length, this.jobs.slice());
    const size = this.jobs.length + 2;
    if (r.locs.length < size) r.grow(size);
    r.locs.set(this.locs.subarray(0, size));
    r.dep.set(this.dep.subarray(0, size));
    r.late.set(this.late.subarray(0, size));
    r.load.set(this.load);
    r.cost = this.cost;
    return r;
  }

  private grow(size: number) {
    const n = Math.max(size, this.locs.length * 2);
    this.locs = new Int32Array(n);
    this.dep = new Float64Array(n);
    this.late = new Float64Array(n);
  }

  /** Recomputes the arrays after the jobs changed; false when the route breaks a window. */
  update(m: Model): boolean {
    const jobs = this.jobs;
    const len = jobs.length;
    if (this.locs.length < len + 2) this.grow(len + 2);
    const { locs, dep, late } = this;
    const n = m.nLocs;
    const v = this.vehicle;
    locs[0] = m.vStart[v];
    for (let i = 0; i < len; i++) locs[i + 1] = m.jobLoc[jobs[i]];
    locs[len + 1] = m.vEnd[v];
    let ok = true;
    let cost = 0;
    dep[0] = m.vTwStart[v];
    for (let i = 1; i <= len + 1; i++) {
      const d = m.dur[locs[i - 1] * n + locs[i]];
      cost += d;
      const arrival = dep[i - 1] + d;
      if (i === len + 1) {
        dep[i] = arrival;
        if (arrival > m.vTwEnd[v]) ok = false;
      } else {
        const j = jobs[i - 1];
        let s = serviceStart(m, j, arrival);
        if (s < 0) {
          ok = false;
          s = arrival;
        }
        dep[i] = s + m.jobService[j];
      }
    }
    this.cost = cost;
    late[len + 1] = m.vTwEnd[v];
    for (let i = len; i >= 1; i--) {
      const j = jobs[i - 1];
      late[i] = latestStart(m, j, late[i + 1] - m.dur[locs[i] * n + locs[i + 1]] - m.jobService[j]);
    }
    late[0] = late[1] - m.dur[locs[0] * n + locs[1]];
    const load = this.load;
    load.fill(0);
    const dims = m.dims;
    for (const j of jobs) for (let k = 0; k < dims; k++) load[k] += m.demand[j * dims + k];
    return ok;
  }

  /** The job's deliveries fit beside the route's. */
  fits(m: Model, j: number): boolean {
    const dims = m.dims;
    const base = this.vehicle * dims;
    for (let k = 0; k < dims; k++) if (this.load[k] + m.demand[j * dims + k] > m.capacity[base + k]) return false;
    return true;
  }

  /** Job j can go between positions p and p + 1 without breaking a window (capacity aside). */
  canInsert(m: Model, j: number, p: number): boolean {
    const n = m.nLocs;
    const jl = m.jobLoc[j];
    const s = serviceStart(m, j, this.dep[p] + m.dur[this.locs[p] * n + jl]);
    if (s < 0) return false;
    return s + m.jobService[j] + m.dur[jl * n + this.locs[p + 1]] <= this.late[p + 1];
  }
}
