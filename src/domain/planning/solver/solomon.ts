import type { VroomProblem } from './types.js';

/** A Solomon instance: its fleet, and the depot (customer 0) and customers as given. */
export interface SolomonInstance {
  name: string;
  vehicles: number;
  capacity: number;
  customers: { x: number; y: number; demand: number; ready: number; due: number; service: number }[];
}

/** Parses Solomon's text form (name; VEHICLE NUMBER CAPACITY; CUSTOMER rows). */
export function parseSolomon(text: string): SolomonInstance {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const name = lines.find((l) => l !== '') ?? '';
  const numbers = lines.map((l) => (/^[0-9.\s-]+$/.test(l) && l !== '' ? l.split(/\s+/).map(Number) : undefined));
  const rows = numbers.filter((r): r is number[] => r !== undefined);
  const fleet = rows.find((r) => r.length === 2);
  if (!fleet) throw new Error(`${name}: no VEHICLE NUMBER CAPACITY line`);
  const customers = rows
    .filter((r) => r.length === 7)
    .map(([, x, y, demand, ready, due, service]) => ({ x, y, demand, ready, due, service }));
  if (customers.length < 2) throw new Error(`${name}: no customers`);
  return { name, vehicles: fleet[0], capacity: fleet[1], customers };
}

export const euclid = (a: { x: number; y: number }, b: { x: number; y: number }) => Math.hypot(a.x - b.x, a.y - b.y);

/**
 * The instance as `fsm solve` takes it: durations round(1000 × distance), times × 1000, the
 * instance's fleet at the depot (location 0) within the depot's window, job i at location i.
 */
export function solomonToVroom(inst: SolomonInstance): VroomProblem {
  const c = inst.customers;
  const durations = c.map((a) => c.map((b) => Math.round(1000 * euclid(a, b))));
  const depot = c[0];
  return {
    jobs: c.slice(1).map((k, i) => ({
      id: i + 1,
      location_index: i + 1,
      service: Math.round(k.service * 1000),
      delivery: [k.demand],
      time_windows: [[Math.round(k.ready * 1000), Math.round(k.due * 1000)]],
    })),
    vehicles: Array.from({ length: inst.vehicles }, (_, v) => ({
      id: v + 1,
      start_index: 0,
      end_index: 0,
      capacity: [inst.capacity],
      time_window: [Math.round(depot.ready * 1000), Math.round(depot.due * 1000)] as [number, number],
    })),
    matrices: { car: { durations } },
  };
}

/** The routes' total Euclidean distance in coordinate units (double precision), from a VROOM answer. */
export function solomonDistance(inst: SolomonInstance, routes: { steps: { location_index?: number }[] }[]): number {
  let total = 0;
  for (const r of routes) {
    const locs = r.steps.map((s) => s.location_index!);
    for (let i = 1; i < locs.length; i++) total += euclid(inst.customers[locs[i - 1]], inst.customers[locs[i]]);
  }
  return total;
}
