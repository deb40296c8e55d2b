/**
 * The dispatch solver's types: the problem as VROOM's JSON form gives it (PRODUCT §15), the
 * internal model the solver works on (typed arrays, indexes instead of ids), and its answer.
 */

export interface VroomJob {
  id: number;
  location_index: number;
  service?: number;
  delivery?: number[];
  time_windows?: [number, number][];
  skills?: number[];
  priority?: number;
}

export interface VroomVehicle {
  id: number;
  start_index?: number;
  end_index?: number;
  capacity?: number[];
  time_window?: [number, number];
  skills?: number[];
}

export interface VroomProblem {
  jobs: VroomJob[];
  vehicles: VroomVehicle[];
  matrices: { car: { durations: number[][]; distances?: number[][] } };
}

export interface VroomStep {
  type: 'start' | 'job' | 'end';
  id?: number;
  location_index: number;
  arrival: number;
  service: number;
  waiting_time: number;
}

export interface VroomRoute {
  vehicle: number;
  cost: number;
  duration: number;
  steps: VroomStep[];
}

export interface VroomSolution {
  code: 0;
  summary: { cost: number; routes: number; unassigned: number; duration: number; waiting_time: number };
  unassigned: { id: number }[];
  routes: VroomRoute[];
}

/**
 * The problem as the solver sees it. Locations are matrix indexes; one more location than the
 * matrix has (`dummy`, at zero duration from and to everywhere) stands for an absent start or end
 * (an open route). All of it is plain data and typed arrays, so it crosses to a worker as it is.
 */
export interface Model {
  nJobs: number;
  nVehicles: number;
  /** Matrix side, with the dummy location (the last index). */
  nLocs: number;
  dummy: number;
  /** durations[from * nLocs + to]. */
  dur: Int32Array;
  jobLoc: Int32Array;
  jobService: Float64Array;
  /** The windows of job j are twStart/twEnd[twOffset[j] .. twOffset[j + 1]), sorted, disjoint. */
  twOffset: Int32Array;
  twStart: Float64Array;
  twEnd: Float64Array;
  /** Size of the amounts (0: no capacity constraint). */
  dims: number;
  /** demand[j * dims + k]. */
  demand: Float64Array;
  /** capacity[v * dims + k] (Infinity when the vehicle has none). */
  capacity: Float64Array;
  /** compat[j * nVehicles + v] = 1 when v holds every skill j needs. */
  compat: Uint8Array;
  priority: Int32Array;
  vStart: Int32Array;
  vEnd: Int32Array;
  vHasStart: Uint8Array;
  vHasEnd: Uint8Array;
  vTwStart: Float64Array;
  vTwEnd: Float64Array;
  jobId: Float64Array;
  vehicleId: Float64Array;
}

export interface SolveOptions {
  /** Wall-clock budget of the search (the construction always completes). */
  timeLimitMs: number;
  /** The random seed; a run is deterministic for a seed when it stops on maxIterations. */
  seed?: number;
  /** Stop after this many ruin-and-recreate iterations (the temperature then follows the iterations). */
  maxIterations?: number;
}

export interface SolvedRoute {
  /** Vehicle index in the model. */
  vehicle: number;
  /** Job indexes in visiting order. */
  jobs: number[];
}

export interface Solution {
  routes: SolvedRoute[];
  /** Job indexes left out. */
  unassigned: number[];
  /** Total travel duration of the routes. */
  cost: number;
  iterations: number;
}
