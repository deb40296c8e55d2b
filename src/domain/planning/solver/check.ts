import type { VroomProblem, VroomSolution } from './types.js';

/**
 * An independent check of an answer against its problem (both in VROOM's form), sharing nothing
 * with the solver's bookkeeping: every job served once or reported unassigned; each route's times
 * recomputed from the matrix (arrivals as reported, services inside a window, the vehicle within
 * its time window), its deliveries within the vehicle's capacity, its jobs' skills held by the
 * vehicle; the reported costs and durations as recomputed. Returns the problems found (none: feasible).
 */
export function checkSolution(problem: VroomProblem, answer: VroomSolution): string[] {
  const errors: string[] = [];
  const durations = problem.matrices.car.durations;
  const jobs = new Map(problem.jobs.map((j) => [j.id, j]));
  const vehicles = new Map(problem.vehicles.map((v) => [v.id, v]));
  const seen = new Map<number, string>();
  const see = (id: number, where: string) => {
    if (!jobs.has(id)) errors.push(`${where}: no job ${id} in the problem`);
    else if (seen.has(id)) errors.push(`${where}: job ${id} already in ${seen.get(id)}`);
    else seen.set(id, where);
  };
  for (const u of answer.unassigned) see(u.id, 'unassigned');
  const usedVehicles = new Set<number>();
  let total = 0;
  let waiting = 0;
  for (const [ri, route] of answer.routes.entries()) {
    const where = `routes[${ri}] (vehicle ${route.vehicle})`;
    const v = vehicles.get(route.vehicle);
    if (!v) {
      errors.push(`${where}: no such vehicle`);
      continue;
    }
    if (usedVehicles.has(v.id)) errors.push(`${where}: the vehicle has another route`);
    usedVehicles.add(v.id);
    const [open, close] = v.time_window ?? [0, Infinity];
    const steps = route.steps;
    const first = steps[0];
    const last = steps[steps.length - 1];
    if ((v.start_index !== undefined) !== (first?.type === 'start'))
      errors.push(`${where}: a start step ${v.start_index !== undefined ? 'is missing' : 'without a start_index'}`);
    if ((v.end_index !== undefined) !== (last?.type === 'end'))
      errors.push(`${where}: an end step ${v.end_index !== undefined ? 'is missing' : 'without an end_index'}`);
    const load: number[] = [];
    let prev: number | undefined;
    let time = -Infinity;
    let travel = 0;
    let routeWaiting = 0;
    for (const [si, step] of steps.entries()) {
      const at = `${where}.steps[${si}]`;
      let arrival: number;
      if (prev === undefined) {
        arrival = step.arrival;
        if (arrival < open) errors.push(`${at}: the vehicle sets out at ${arrival}, before its window opens (${open})`);
      } else {
        const d = durations[prev][step.location_index];
        travel += d;
        arrival = time + d;
        if (step.arrival !== arrival) errors.push(`${at}: arrival ${step.arrival}, recomputed ${arrival}`);
      }
      prev = step.location_index;
      if (step.type === 'start') {
        if (si !== 0) errors.push(`${at}: a start step not first`);
        if (step.location_index !== v.start_index)
          errors.push(`${at}: start at ${step.location_index}, not ${v.start_index}`);
        time = arrival;
      } else if (step.type === 'end') {
        if (si !== steps.length - 1) errors.push(`${at}: an end step not last`);
        if (step.location_index !== v.end_index)
          errors.push(`${at}: end at ${step.location_index}, not ${v.end_index}`);
        if (arrival > close) errors.push(`${at}: back at ${arrival}, after the vehicle's window (${close})`);
        time = arrival;
      } else {
        const job = jobs.get(step.id!);
        see(step.id!, at);
        if (!job) continue;
        if (step.location_index !== job.location_index)
          errors.push(`${at}: job ${job.id} is not at ${step.location_index}`);
        if (step.service !== (job.service ?? 0)) errors.push(`${at}: service ${step.service}, not ${job.service ?? 0}`);
        if (step.waiting_time < 0) errors.push(`${at}: negative waiting time`);
        const start = arrival + step.waiting_time;
        const windows = job.time_windows ?? [[0, Infinity]];
        if (!windows.some(([a, b]) => a <= start && start <= b))
          errors.push(
            `${at}: job ${job.id}'s service starts at ${start}, outside its windows ${JSON.stringify(windows)}`,
          );
        routeWaiting += step.waiting_time;
        time = start + step.service;
        if (time > close) errors.push(`${at}: job ${job.id} ends at ${time}, after the vehicle's window (${close})`);
        (job.delivery ?? []).forEach((x, k) => (load[k] = (load[k] ?? 0) + x));
        const held = new Set(v.skills ?? []);
        for (const s of job.skills ?? [])
          if (!held.has(s)) errors.push(`${at}: job ${job.id} needs skill ${s}, which the vehicle lacks`);
      }
    }
    if (v.capacity)
      load.forEach((x, k) => {
        if (x > (v.capacity![k] ?? 0))
          errors.push(`${where}: load ${x} over the capacity ${v.capacity![k]} (amount ${k})`);
      });
    if (route.cost !== travel || route.duration !== travel)
      errors.push(`${where}: cost ${route.cost} and duration ${route.duration}, recomputed travel ${travel}`);
    total += travel;
    waiting += routeWaiting;
  }
  for (const id of jobs.keys()) if (!seen.has(id)) errors.push(`job ${id} neither served nor unassigned`);
  const s = answer.summary;
  if (s.cost !== total || s.duration !== total) errors.push(`summary: cost ${s.cost}, recomputed ${total}`);
  if (s.routes !== answer.routes.length || s.unassigned !== answer.unassigned.length)
    errors.push('summary: the counts of routes or unassigned jobs differ from the lists');
  if (s.waiting_time !== waiting) errors.push(`summary: waiting_time ${s.waiting_time}, recomputed ${waiting}`);
  return errors;
}
