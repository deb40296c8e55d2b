import { serviceStart } from './routes.js';
import type { Model, Solution, VroomRoute, VroomSolution, VroomStep } from './types.js';

/**
 * The solution in VROOM's output form. Times are computed again from the model: each job's
 * service starts at its earliest feasible time, and the vehicle leaves its start as late as it
 * can without delaying the first service (no waiting there that leaving later would avoid).
 */
export function toVroom(m: Model, s: Solution): VroomSolution {
  const n = m.nLocs;
  const routes: VroomRoute[] = [];
  let total = 0;
  let waiting = 0;
  for (const r of s.routes) {
    const v = r.vehicle;
    const steps: VroomStep[] = [];
    const locs = [m.vStart[v], ...r.jobs.map((j) => m.jobLoc[j]), m.vEnd[v]];
    let departure = m.vTwStart[v];
    if (r.jobs.length) {
      const first = serviceStart(m, r.jobs[0], departure + m.dur[locs[0] * n + locs[1]]);
      departure = Math.max(departure, first - m.dur[locs[0] * n + locs[1]]);
    }
    if (m.vHasStart[v])
      steps.push({ type: 'start', location_index: locs[0], arrival: departure, service: 0, waiting_time: 0 });
    let time = departure;
    let travel = 0;
    let routeWaiting = 0;
    r.jobs.forEach((j, i) => {
      const d = m.dur[locs[i] * n + locs[i + 1]];
      travel += d;
      const arrival = time + d;
      const start = serviceStart(m, j, arrival);
      if (start < 0) throw new Error(`internal: job ${m.jobId[j]} reached after its windows`);
      steps.push({
        type: 'job',
        id: m.jobId[j],
        location_index: locs[i + 1],
        arrival,
        service: m.jobService[j],
        waiting_time: start - arrival,
      });
      routeWaiting += start - arrival;
      time = start + m.jobService[j];
    });
    const last = locs.length - 1;
    const d = m.dur[locs[last - 1] * n + locs[last]];
    travel += d;
    if (m.vHasEnd[v])
      steps.push({ type: 'end', location_index: locs[last], arrival: time + d, service: 0, waiting_time: 0 });
    total += travel;
    waiting += routeWaiting;
    routes.push({ vehicle: m.vehicleId[v], cost: travel, duration: travel, steps });
  }
  return {
    code: 0,
    summary: {
      cost: total,
      routes: routes.length,
      unassigned: s.unassigned.length,
      duration: total,
      waiting_time: waiting,
    },
    unassigned: s.unassigned.map((j) => ({ id: m.jobId[j] })),
    routes,
  };
}
