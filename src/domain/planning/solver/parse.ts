import type { Model } from './types.js';

/** A problem the solver refuses; the message names the member (`jobs[3].time_windows[0]`). */
export class ProblemError extends Error {}

export const MAX_JOBS = 2000;
export const MAX_VEHICLES = 2000;
/** Durations and times stay far below 2^53 when summed over a route. */
const MAX_DURATION = 2 ** 31 - 1;
const MAX_TIME = 2 ** 40;

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (member: string, what: string): never => {
  throw new ProblemError(`${member}: ${what}`);
};

function int(v: Json, member: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    fail(member, `must be an integer from ${min} to ${max}`);
  return v as number;
}

function intArray(v: Json, member: string, min: number, max: number): number[] {
  if (!Array.isArray(v)) fail(member, 'must be an array of integers');
  return (v as Json[]).map((x, i) => int(x, `${member}[${i}]`, min, max));
}

function window(v: Json, member: string): [number, number] {
  if (!Array.isArray(v) || v.length !== 2) fail(member, 'must be a window [start, end] of two integers');
  const [a, b] = [
    int((v as Json[])[0], `${member}[0]`, 0, MAX_TIME),
    int((v as Json[])[1], `${member}[1]`, 0, MAX_TIME),
  ];
  if (a > b) fail(member, `starts after it ends (${a} > ${b})`);
  return [a, b];
}

function matrix(v: Json, member: string, size: number): Int32Array {
  if (!Array.isArray(v)) fail(member, 'must be an array of rows');
  const rows = v as Json[];
  if (rows.length < size) fail(member, `has ${rows.length} rows; the locations used need ${size}`);
  const n = rows.length;
  const out = new Int32Array((n + 1) * (n + 1));
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    if (!Array.isArray(row) || row.length !== n)
      fail(`${member}[${i}]`, `must be a row of ${n} integers (the matrix is not square)`);
    for (let j = 0; j < n; j++) {
      const d = (row as Json[])[j];
      if (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d > MAX_DURATION)
        fail(`${member}[${i}][${j}]`, `must be an integer from 0 to ${MAX_DURATION}`);
      out[i * (n + 1) + j] = d as number;
    }
  }
  return out;
}

/** Checks a problem in VROOM's JSON form and builds the solver's model of it. */
export function parseProblem(input: Json): Model {
  if (!isObject(input)) fail('problem', 'must be a JSON object with jobs, vehicles and matrices');
  const p = input as Record<string, Json>;
  if (!Array.isArray(p.jobs)) fail('jobs', 'must be an array');
  if (!Array.isArray(p.vehicles)) fail('vehicles', 'must be an array');
  const jobs = p.jobs as Json[];
  const vehicles = p.vehicles as Json[];
  if (jobs.length > MAX_JOBS) fail('jobs', `has ${jobs.length} jobs; at most ${MAX_JOBS}`);
  if (vehicles.length === 0) fail('vehicles', 'must hold at least one vehicle');
  if (vehicles.length > MAX_VEHICLES) fail('vehicles', `has ${vehicles.length} vehicles; at most ${MAX_VEHICLES}`);
  const nJobs = jobs.length;
  const nVehicles = vehicles.length;

  let dims = -1;
  let dimsFrom = '';
  const amounts = (v: Json, member: string) => {
    const a = intArray(v, member, 0, MAX_DURATION);
    if (dims >= 0 && a.length !== dims) fail(member, `has ${a.length} amounts where ${dimsFrom} has ${dims}`);
    dims = a.length;
    dimsFrom = member;
    return a;
  };

  const jobIds = new Set<number>();
  let maxLoc = -1;
  const jobWindows: [number, number][][] = [];
  const jobSkills: number[][] = [];
  const jobDemand: (number[] | undefined)[] = [];
  const jobLoc = new Int32Array(nJobs);
  const jobService = new Float64Array(nJobs);
  const priority = new Int32Array(nJobs);
  const jobId = new Float64Array(nJobs);
  jobs.forEach((j, i) => {
    const m = `jobs[${i}]`;
    if (!isObject(j)) fail(m, 'must be an object');
    const job = j as Record<string, Json>;
    const id = int(job.id, `${m}.id`, 0, Number.MAX_SAFE_INTEGER);
    if (jobIds.has(id)) fail(`${m}.id`, `${id} is the id of another job`);
    jobIds.add(id);
    jobId[i] = id;
    jobLoc[i] = int(job.location_index, `${m}.location_index`, 0, 1e6);
    maxLoc = Math.max(maxLoc, jobLoc[i]);
    jobService[i] = job.service === undefined ? 0 : int(job.service, `${m}.service`, 0, MAX_DURATION);
    priority[i] = job.priority === undefined ? 0 : int(job.priority, `${m}.priority`, 0, 100);
    jobSkills.push(job.skills === undefined ? [] : intArray(job.skills, `${m}.skills`, 0, MAX_DURATION));
    jobDemand.push(job.delivery === undefined ? undefined : amounts(job.delivery, `${m}.delivery`));
    if (job.time_windows === undefined) jobWindows.push([[0, Infinity]]);
    else {
      if (!Array.isArray(job.time_windows) || job.time_windows.length === 0)
        fail(`${m}.time_windows`, 'must be a non-empty array of windows [start, end]');
      const ws = (job.time_windows as Json[]).map((w, k) => window(w, `${m}.time_windows[${k}]`));
      ws.sort((a, b) => a[0] - b[0]);
      const merged: [number, number][] = [];
      for (const w of ws) {
        const last = merged[merged.length - 1];
        if (last && w[0] <= last[1]) last[1] = Math.max(last[1], w[1]);
        else merged.push([w[0], w[1]]);
      }
      jobWindows.push(merged);
    }
  });

  const vehicleIds = new Set<number>();
  const vehicleSkills: Set<number>[] = [];
  const vehicleCapacity: (number[] | undefined)[] = [];
  const vStartIdx = new Int32Array(nVehicles).fill(-1);
  const vEndIdx = new Int32Array(nVehicles).fill(-1);
  const vTwStart = new Float64Array(nVehicles);
  const vTwEnd = new Float64Array(nVehicles).fill(Infinity);
  const vehicleId = new Float64Array(nVehicles);
  vehicles.forEach((v, i) => {
    const m = `vehicles[${i}]`;
    if (!isObject(v)) fail(m, 'must be an object');
    const veh = v as Record<string, Json>;
    const id = int(veh.id, `${m}.id`, 0, Number.MAX_SAFE_INTEGER);
    if (vehicleIds.has(id)) fail(`${m}.id`, `${id} is the id of another vehicle`);
    vehicleIds.add(id);
    vehicleId[i] = id;
    if (veh.start_index !== undefined) vStartIdx[i] = int(veh.start_index, `${m}.start_index`, 0, 1e6);
    if (veh.end_index !== undefined) vEndIdx[i] = int(veh.end_index, `${m}.end_index`, 0, 1e6);
    maxLoc = Math.max(maxLoc, vStartIdx[i], vEndIdx[i]);
    if (veh.time_window !== undefined) [vTwStart[i], vTwEnd[i]] = window(veh.time_window, `${m}.time_window`);
    vehicleSkills.push(new Set(veh.skills === undefined ? [] : intArray(veh.skills, `${m}.skills`, 0, MAX_DURATION)));
    vehicleCapacity.push(veh.capacity === undefined ? undefined : amounts(veh.capacity, `${m}.capacity`));
  });

  if (!isObject(p.matrices) || !isObject((p.matrices as Record<string, Json>).car))
    fail('matrices.car', 'must be an object with durations');
  const car = (p.matrices as Record<string, Record<string, Json>>).car;
  const dur = matrix(car.durations, 'matrices.car.durations', maxLoc + 1);
  const side = Math.round(Math.sqrt(dur.length));
  if (car.distances !== undefined) {
    // Accepted and checked for shape; the cost is the durations'.
    const d = matrix(car.distances, 'matrices.car.distances', maxLoc + 1);
    if (d.length !== dur.length) fail('matrices.car.distances', 'must be the size of matrices.car.durations');
  }
  const nLocs = side;
  const dummy = nLocs - 1;

  dims = Math.max(dims, 0);
  const demand = new Float64Array(nJobs * dims);
  jobDemand.forEach((d, j) => d?.forEach((x, k) => (demand[j * dims + k] = x)));
  const capacity = new Float64Array(nVehicles * dims).fill(Infinity);
  vehicleCapacity.forEach((c, v) => c?.forEach((x, k) => (capacity[v * dims + k] = x)));

  const compat = new Uint8Array(nJobs * nVehicles);
  for (let j = 0; j < nJobs; j++)
    for (let v = 0; v < nVehicles; v++)
      compat[j * nVehicles + v] = jobSkills[j].every((s) => vehicleSkills[v].has(s)) ? 1 : 0;

  const twOffset = new Int32Array(nJobs + 1);
  jobWindows.forEach((ws, j) => (twOffset[j + 1] = twOffset[j] + ws.length));
  const twStart = new Float64Array(twOffset[nJobs]);
  const twEnd = new Float64Array(twOffset[nJobs]);
  jobWindows.forEach((ws, j) =>
    ws.forEach(([a, b], k) => ((twStart[twOffset[j] + k] = a), (twEnd[twOffset[j] + k] = b))),
  );

  const vStart = new Int32Array(nVehicles);
  const vEnd = new Int32Array(nVehicles);
  const vHasStart = new Uint8Array(nVehicles);
  const vHasEnd = new Uint8Array(nVehicles);
  for (let v = 0; v < nVehicles; v++) {
    vHasStart[v] = vStartIdx[v] >= 0 ? 1 : 0;
    vHasEnd[v] = vEndIdx[v] >= 0 ? 1 : 0;
    vStart[v] = vStartIdx[v] >= 0 ? vStartIdx[v] : dummy;
    vEnd[v] = vEndIdx[v] >= 0 ? vEndIdx[v] : dummy;
  }
  const model: Model = {
    nJobs,
    nVehicles,
    nLocs,
    dummy,
    dur,
    jobLoc,
    jobService,
    twOffset,
    twStart,
    twEnd,
    dims,
    demand,
    capacity,
    compat,
    priority,
    vStart,
    vEnd,
    vHasStart,
    vHasEnd,
    vTwStart,
    vTwEnd,
    jobId,
    vehicleId,
  };
  for (let j = 0; j < nJobs; j++)
    if (!reachable(model, j))
      fail(
        `jobs[${j}].time_windows`,
        `job ${jobId[j]} has no window a vehicle can reach from its start within its time window`,
      );
  return model;
}

/** Some vehicle can leave its start, serve j inside one of its windows and reach its end in time. */
function reachable(m: Model, j: number): boolean {
  const n = m.nLocs;
  const loc = m.jobLoc[j];
  for (let v = 0; v < m.nVehicles; v++) {
    const arrival = m.vTwStart[v] + m.dur[m.vStart[v] * n + loc];
    for (let k = m.twOffset[j]; k < m.twOffset[j + 1]; k++) {
      if (arrival > m.twEnd[k]) continue;
      const s = Math.max(arrival, m.twStart[k]);
      if (s + m.jobService[j] + m.dur[loc * n + m.vEnd[v]] <= m.vTwEnd[v]) return true;
    }
  }
  return false;
}
