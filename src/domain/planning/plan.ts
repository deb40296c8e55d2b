/**
 * A day's plan (PRODUCT §15, `plans`): the users, visits and fixed visits of one date turned into a
 * problem of the dispatch solver (VROOM's form), and its answer mapped back to routes of visits.
 * Pure: the travel matrix and the solver are given (the caller runs the solver on a worker).
 *
 * The model: one vehicle per (user, working interval of the date minus their unavailabilities),
 * its time window that piece, starting and ending at the user's home (no start or end without a
 * home); each visit of the plan a job (service its duration, its arrival window or the day, the
 * skills of its job); each of a user's visits that is not in the plan (locked, or not chosen) a job
 * of an exact window [start, start] that only that piece's vehicle can take, of top priority, so it
 * stays where it is and the route travels to and from it. Times are whole seconds from the day's
 * start; a plan visit's service is its duration rounded up, so its real end is never later.
 *
 * A plan visit left unassigned keeps its user: it then stays where it is like a visit not in the
 * plan. When such a visit's user has a route, the day is solved again with it fixed (the rounds
 * share the time limit), until no unassigned visit's user has a route; past the last round, the
 * routes of such users are given up (their visits unassigned, `noTime`), so no route ever meets a
 * visit that stays.
 */
import { parseProblem, ProblemError, toVroom } from './solver/index.js';
import type { Model, Solution, SolveOptions, VroomJob, VroomProblem, VroomVehicle } from './solver/index.js';
import type { Place } from './travel.js';

export type Interval = [number, number];

export interface PlanUser {
  id: number;
  home: Place | null;
  /** Skill ids the user holds. */
  skills: number[];
  /** The working intervals of the date (epoch ms). */
  intervals: Interval[];
  /** Unavailabilities overlapping the date (epoch ms). */
  busy: Interval[];
}

export interface PlanVisit {
  id: number;
  place: Place | null;
  start: number;
  end: number;
  window: Interval | null;
  /** The skills its job requires. */
  skills: number[];
  user: number | null;
}

/** A visit that stays as it is: not in the plan, of a user of the plan (or of a visit's current user). */
export interface FixedVisit {
  id: number;
  user: number;
  place: Place | null;
  start: number;
  end: number;
}

export interface PlanInput {
  /** The date's first and last instants (epoch ms: local midnight to the next). */
  dayStart: number;
  dayEnd: number;
  users: PlanUser[];
  visits: PlanVisit[];
  /** The visits of the date that stay, of the plan's users and of the plan visits' current users. */
  fixed: FixedVisit[];
  /** Homes of the plan visits' current users (for the current measures). */
  homes: Map<number, Place | null>;
}

export interface Matrix {
  seconds: number[][];
  km: number[][];
  warnings: string[];
}

export type Reason = 'noUser' | 'noLocation' | 'noTime';

export interface PlanStep {
  visit: { id: number };
  startTime: number;
  endTime: number;
  travelSeconds: number;
  distanceKm: number;
}

export interface PlanRoute {
  user: { id: number };
  steps: PlanStep[];
  travelSeconds: number;
  distanceKm: number;
}

export interface PlanResult {
  routes: PlanRoute[];
  unassigned: { visit: { id: number }; reason: Reason }[];
  travelSeconds: number;
  distanceKm: number;
  currentTravelSeconds: number;
  currentDistanceKm: number;
  warnings: string[];
}

export interface PlanDeps {
  matrix(places: Place[]): Promise<Matrix>;
  solve(model: Model, opts: SolveOptions): Promise<Solution>;
  /** The solver's budget, asked once the matrix is known (what is left of the request's limit). */
  timeLimitMs(): number;
}

const km3 = (x: number) => Math.round(x * 1000) / 1000;

/** `intervals` minus `cuts`, each sorted, empty pieces dropped. */
export function subtract(intervals: Interval[], cuts: Interval[]): Interval[] {
  let out = intervals.filter(([a, b]) => b > a).map(([a, b]) => [a, b] as Interval);
  for (const [ca, cb] of cuts) {
    const next: Interval[] = [];
    for (const [a, b] of out) {
      if (cb <= a || ca >= b) next.push([a, b]);
      else {
        if (ca > a) next.push([a, ca]);
        if (cb < b) next.push([cb, b]);
      }
    }
    out = next;
  }
  return out.sort((x, y) => x[0] - y[0]);
}

interface Piece {
  user: PlanUser;
  start: number;
  end: number;
  fixed: FixedVisit[];
  /** Where it starts and ends (place indexes): home, or a fixed visit cut out just before (after); null: none. */
  from: number | null;
  to: number | null;
}

/** Rounds of solving at most, and the share of what is left of the limit a round before the last takes. */
const ROUNDS = 3;
const ROUND_SHARE = 0.6;

/** Plans the day; see the module's comment for the model. */
export async function makePlan(input: PlanInput, deps: PlanDeps): Promise<PlanResult> {
  const byId = new Map(input.visits.map((v) => [v.id, v]));
  const kept = new Map<number, Reason>();
  for (let round = 1; ; round++) {
    const last = round === ROUNDS || !input.visits.some((v) => v.user !== null && !kept.has(v.id));
    const shared = last ? deps : { ...deps, timeLimitMs: () => Math.floor(deps.timeLimitMs() * ROUND_SHARE) };
    const visits = input.visits.filter((v) => !kept.has(v.id));
    const fixed = [...input.fixed, ...[...kept.keys()].map((id) => staying(byId.get(id)!))];
    const result = await planOnce({ ...input, visits, fixed }, shared, input.visits);
    result.unassigned.push(...[...kept].map(([id, reason]) => ({ visit: { id }, reason })));
    const routed = new Set(result.routes.map((r) => r.user.id));
    const meeting = result.unassigned.filter((u) => {
      const user = byId.get(u.visit.id)!.user;
      return user !== null && routed.has(user) && !kept.has(u.visit.id);
    });
    if (!meeting.length) return sorted(result);
    if (last) return sorted(givenUp(result, byId));
    for (const u of meeting) kept.set(u.visit.id, u.reason);
  }
}

/** An unassigned plan visit as a visit that stays (of its current user). */
const staying = (v: PlanVisit): FixedVisit => ({ id: v.id, user: v.user!, place: v.place, start: v.start, end: v.end });

/** The routes of users who keep an unassigned visit, given up (their visits unassigned too), until none is left. */
function givenUp(result: PlanResult, byId: Map<number, PlanVisit>): PlanResult {
  let routes = result.routes;
  const unassigned = [...result.unassigned];
  for (;;) {
    const keeping = new Set(unassigned.map((u) => byId.get(u.visit.id)!.user).filter((u) => u !== null));
    const dropped = routes.filter((r) => keeping.has(r.user.id));
    if (!dropped.length) break;
    routes = routes.filter((r) => !keeping.has(r.user.id));
    for (const r of dropped) unassigned.push(...r.steps.map((s) => ({ visit: s.visit, reason: 'noTime' as const })));
  }
  return {
    ...result,
    routes,
    unassigned,
    travelSeconds: routes.reduce((s, r) => s + r.travelSeconds, 0),
    distanceKm: km3(routes.reduce((s, r) => s + r.distanceKm, 0)),
  };
}

const sorted = (result: PlanResult): PlanResult => ({
  ...result,
  unassigned: [...result.unassigned].sort((a, b) => a.visit.id - b.visit.id),
});

/**
 * One solve of the day: `input.visits` are the plan visits still to place; `all` every visit of the
 * plan, for the current measures.
 */
async function planOnce(input: PlanInput, deps: PlanDeps, all: PlanVisit[]): Promise<PlanResult> {
  const { dayStart } = input;
  const sec = (ms: number) => (ms - dayStart) / 1000;
  const daySeconds = Math.floor(sec(input.dayEnd));

  // Every place, once.
  const places: Place[] = [];
  const placeIdx = new Map<string, number>();
  const indexOf = (p: Place | null): number | null => {
    if (!p) return null;
    const key = `${p.lat},${p.lng}`;
    let i = placeIdx.get(key);
    if (i === undefined) {
      i = places.length;
      places.push({ lat: p.lat, lng: p.lng });
      placeIdx.set(key, i);
    }
    return i;
  };
  for (const u of input.users) indexOf(u.home);
  for (const v of input.visits) indexOf(v.place);
  for (const f of input.fixed) indexOf(f.place);
  for (const h of input.homes.values()) indexOf(h);
  const m = places.length ? await deps.matrix(places) : { seconds: [], km: [], warnings: [] };
  const d = (a: number | null, b: number | null) => (a === null || b === null ? 0 : m.seconds[a][b]);
  const dk = (a: number | null, b: number | null) => (a === null || b === null ? 0 : m.km[a][b]);

  // The pieces of each user's day, and the fixed visits inside each.
  const fixedOf = new Map<number, FixedVisit[]>();
  for (const f of input.fixed) fixedOf.set(f.user, [...(fixedOf.get(f.user) ?? []), f]);
  const pieces: Piece[] = [];
  for (const u of input.users) {
    const fixed = (fixedOf.get(u.id) ?? []).filter((f) => f.end > input.dayStart && f.start < input.dayEnd);
    const home = indexOf(u.home);
    // A fixed visit without a place, or crossing a piece's edge, or one the user cannot reach (or
    // leave in time for what follows) within its piece, is a time the user is away: cut out of the
    // pieces; the piece after it starts from its place (the one before ends there).
    const cutFixed: FixedVisit[] = fixed.filter((f) => !f.place);
    for (;;) {
      const ps = subtract(u.intervals, [...u.busy, ...cutFixed.map((f) => [f.start, f.end] as Interval)]);
      const built: Piece[] = ps.map(([start, end]) => {
        const from = cutFixed.find((f) => f.end === start);
        const to = cutFixed.find((f) => f.start === end);
        return {
          user: u,
          start,
          end,
          fixed: [],
          from: from ? indexOf(from.place) : home,
          to: to ? indexOf(to.place) : home,
        };
      });
      let changed = false;
      for (const f of fixed) {
        if (!f.place || cutFixed.includes(f)) continue;
        const overlapping = built.filter((p) => f.end > p.start && f.start < p.end);
        if (!overlapping.length) continue;
        const p = overlapping[0];
        const loc = indexOf(f.place);
        const inside = overlapping.length === 1 && f.start >= p.start && f.end <= p.end;
        const reach =
          inside &&
          Math.ceil(sec(p.start)) + d(p.from, loc) <= Math.floor(sec(f.start)) &&
          Math.ceil(sec(f.end)) + d(loc, p.to) <= Math.floor(sec(p.end));
        if (!reach) {
          cutFixed.push(f);
          changed = true;
        } else p.fixed.push(f);
      }
      // Two fixed visits of one piece that cannot follow each other: both are cut out.
      for (const p of built) {
        p.fixed.sort((a, b) => a.start - b.start);
        for (let i = 1; i < p.fixed.length; i++) {
          const a = p.fixed[i - 1];
          const b = p.fixed[i];
          if (Math.ceil(sec(a.end)) + d(indexOf(a.place), indexOf(b.place)) > Math.floor(sec(b.start))) {
            for (const x of [a, b]) if (!cutFixed.includes(x)) cutFixed.push(x);
            changed = true;
          }
        }
      }
      if (!changed) {
        pieces.push(...built.filter((p) => Math.floor(sec(p.end)) > Math.ceil(sec(p.start))));
        break;
      }
    }
  }

  // Skill ids mapped to small integers; each piece has one of its own for its fixed visits.
  const skillNo = new Map<number, number>();
  const skillOf = (s: number) => {
    let n = skillNo.get(s);
    if (n === undefined) skillNo.set(s, (n = skillNo.size + 1));
    return n;
  };
  const hasSkills = (u: PlanUser, v: PlanVisit) => v.skills.every((s) => u.skills.includes(s));
  const working = input.users.filter((u) => u.intervals.some(([a, b]) => b > a));

  const unassigned: PlanResult['unassigned'] = [];
  const jobs: VroomJob[] = [];
  const jobMeta: ({ plan: PlanVisit } | { fixed: FixedVisit; piece: number })[] = [];
  for (const v of input.visits) {
    const loc = indexOf(v.place);
    if (loc === null) {
      unassigned.push({ visit: { id: v.id }, reason: 'noLocation' });
      continue;
    }
    if (!working.some((u) => hasSkills(u, v))) {
      unassigned.push({ visit: { id: v.id }, reason: 'noUser' });
      continue;
    }
    const service = Math.max(0, Math.ceil((v.end - v.start) / 1000));
    let w: Interval = [0, daySeconds];
    if (v.window) w = [Math.max(0, Math.ceil(sec(v.window[0]))), Math.min(daySeconds, Math.floor(sec(v.window[1])))];
    // Some piece of a user with the skills can reach it inside its window and get home in time.
    const reachable =
      w[0] <= w[1] &&
      pieces.some((p) => {
        if (!hasSkills(p.user, v)) return false;
        const arrival = Math.ceil(sec(p.start)) + d(p.from, loc);
        return arrival <= w[1] && Math.max(arrival, w[0]) + service + d(loc, p.to) <= Math.floor(sec(p.end));
      });
    if (!reachable) {
      unassigned.push({ visit: { id: v.id }, reason: 'noTime' });
      continue;
    }
    jobMeta.push({ plan: v });
    jobs.push({
      id: jobs.length,
      location_index: loc,
      service,
      time_windows: [w],
      skills: v.skills.map(skillOf),
    });
  }
  const planJobs = jobs.length;
  const pieceSkill = (i: number) => 1_000_000 + i;
  pieces.forEach((p, i) =>
    p.fixed.forEach((f) => {
      const s = Math.floor(sec(f.start));
      jobMeta.push({ fixed: f, piece: i });
      jobs.push({
        id: jobs.length,
        location_index: indexOf(f.place)!,
        service: Math.ceil(sec(f.end)) - s,
        time_windows: [[s, s]],
        skills: [pieceSkill(i)],
        priority: 100,
      });
    }),
  );
  const vehicles: VroomVehicle[] = pieces.map((p, i) => {
    return {
      id: i,
      ...(p.from === null ? {} : { start_index: p.from }),
      ...(p.to === null ? {} : { end_index: p.to }),
      time_window: [Math.ceil(sec(p.start)), Math.floor(sec(p.end))],
      skills: [...p.user.skills.map(skillOf), pieceSkill(i)],
    };
  });

  const routesOf = new Map<number, PlanRoute>();
  const warnings = [...m.warnings];
  if (planJobs > 0 && vehicles.length > 0) {
    const problem: VroomProblem = { jobs, vehicles, matrices: { car: { durations: m.seconds } } };
    let model: Model;
    try {
      model = parseProblem(problem);
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      throw new Error(`internal: the plan's problem was refused: ${err.message}`, { cause: err });
    }
    const solution = await deps.solve(model, { timeLimitMs: Math.max(50, deps.timeLimitMs()) });
    const answer = toVroom(model, solution);
    // A vehicle whose fixed visit the solver left out: its plan visits could overlap it; none kept.
    const dropped = new Set<number>();
    for (const { id } of answer.unassigned) {
      const meta = jobMeta[id];
      if ('plan' in meta) unassigned.push({ visit: { id: meta.plan.id }, reason: 'noTime' });
      else dropped.add(meta.piece);
    }
    for (const r of answer.routes) {
      const piece = pieces[r.vehicle];
      if (dropped.has(r.vehicle)) {
        for (const s of r.steps)
          if (s.type === 'job' && 'plan' in jobMeta[s.id!])
            unassigned.push({ visit: { id: (jobMeta[s.id!] as { plan: PlanVisit }).plan.id }, reason: 'noTime' });
        continue;
      }
      let prev: number | null = piece.from;
      let travel = 0;
      let dist = 0;
      const steps: PlanStep[] = [];
      for (const s of r.steps) {
        if (s.type === 'start') continue;
        const leg = d(prev, s.location_index);
        const legKm = dk(prev, s.location_index);
        travel += leg;
        dist += legKm;
        prev = s.location_index;
        if (s.type !== 'job') continue;
        const meta = jobMeta[s.id!];
        if (!('plan' in meta)) continue;
        const startTime = dayStart + (s.arrival + s.waiting_time) * 1000;
        steps.push({
          visit: { id: meta.plan.id },
          startTime,
          endTime: startTime + (meta.plan.end - meta.plan.start),
          travelSeconds: leg,
          distanceKm: km3(legKm),
        });
      }
      // No end step without a home: the route ends at its last visit.
      const route = routesOf.get(piece.user.id) ?? {
        user: { id: piece.user.id },
        steps: [],
        travelSeconds: 0,
        distanceKm: 0,
      };
      route.steps.push(...steps);
      route.travelSeconds += travel;
      route.distanceKm += dist;
      routesOf.set(piece.user.id, route);
    }
  }
  const routes = [...routesOf.values()].filter((r) => r.steps.length);
  for (const r of routes) {
    r.steps.sort((a, b) => a.startTime - b.startTime);
    r.distanceKm = km3(r.distanceKm);
  }
  routes.sort((a, b) => a.user.id - b.user.id);

  // The same measures for the plan's visits as they are assigned now: each current user's day
  // (their plan visits and the visits that stay, in time order, from and back to home).
  let currentTravel = 0;
  let currentKm = 0;
  const current = new Map<number, { start: number; loc: number | null }[]>();
  const inPlan = new Set(all.map((v) => v.id));
  for (const v of all)
    if (v.user !== null)
      current.set(v.user, [...(current.get(v.user) ?? []), { start: v.start, loc: indexOf(v.place) }]);
  for (const [user, stops] of current) {
    const all = [
      ...stops,
      ...(fixedOf.get(user) ?? [])
        .filter((f) => f.end > input.dayStart && f.start < input.dayEnd && !inPlan.has(f.id))
        .map((f) => ({ start: f.start, loc: indexOf(f.place) })),
    ]
      .filter((s) => s.loc !== null)
      .sort((a, b) => a.start - b.start);
    const home = indexOf(input.homes.get(user) ?? null);
    let prev: number | null = home;
    for (const s of all) {
      currentTravel += d(prev, s.loc);
      currentKm += dk(prev, s.loc);
      prev = s.loc;
    }
    if (all.length) {
      currentTravel += d(prev, home);
      currentKm += dk(prev, home);
    }
  }

  return {
    routes,
    unassigned,
    travelSeconds: routes.reduce((s, r) => s + r.travelSeconds, 0),
    distanceKm: km3(routes.reduce((s, r) => s + r.distanceKm, 0)),
    currentTravelSeconds: currentTravel,
    currentDistanceKm: km3(currentKm),
    warnings,
  };
}
