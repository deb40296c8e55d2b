/**
 * An independent check of a plan (PRODUCT §15, "What every plan holds"), from the day as the API
 * shows it: nothing of the planner's model is used, travel is the great circle at the speed given.
 * Returns the broken rules (empty when the plan holds).
 */
import assert from 'node:assert/strict';
import { call, type Tenant, type TestApp } from './helpers.js';

export interface DayPlace {
  lat: number;
  lng: number;
}
export interface DayUser {
  id: number;
  home: DayPlace | null;
  skills: number[];
  /** The working intervals of the date, epoch ms. */
  intervals: [number, number][];
  leave: [number, number][];
}
export interface DayVisit {
  id: number;
  user: number | null;
  place: DayPlace | null;
  start: number;
  end: number;
  window: [number, number] | null;
  skills: number[];
  locked: boolean;
  state: string;
  deleted: boolean;
}
export interface Day {
  users: DayUser[];
  /** Every visit of the account on the date. */
  visits: DayVisit[];
  speedKmh: number;
}

export interface PlanShown {
  users: { id: number }[];
  visits: { id: number }[];
  routes: {
    user: { id: number };
    steps: { visit: { id: number }; startTime: string; endTime: string; travelSeconds: number; distanceKm: number }[];
    travelSeconds: number;
    distanceKm: number;
  }[];
  unassigned: { visit: { id: number }; reason: string }[];
  travelSeconds: number;
  distanceKm: number;
}

const rad = (d: number) => (d * Math.PI) / 180;
function km(a: DayPlace, b: DayPlace): number {
  const h =
    Math.sin(rad(b.lat - a.lat) / 2) ** 2 +
    Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function checkPlan(day: Day, plan: PlanShown): string[] {
  const out: string[] = [];
  const secs = (a: DayPlace | null, b: DayPlace | null) =>
    a && b ? Math.ceil((km(a, b) / day.speedKmh) * 3600 - 1e-9) : 0;
  const users = new Map(day.users.map((u) => [u.id, u]));
  const visits = new Map(day.visits.map((v) => [v.id, v]));
  const planned = new Set(plan.visits.map((v) => v.id));
  const staying = new Set(plan.unassigned.map((u) => u.visit.id));
  const seen = new Map<number, number>();
  for (const r of plan.routes) for (const s of r.steps) seen.set(s.visit.id, (seen.get(s.visit.id) ?? 0) + 1);
  for (const u of plan.unassigned) seen.set(u.visit.id, (seen.get(u.visit.id) ?? 0) + 1);
  for (const id of planned) if (seen.get(id) !== 1) out.push(`visit ${id} appears ${seen.get(id) ?? 0} times`);
  for (const id of seen.keys()) if (!planned.has(id)) out.push(`visit ${id} is not of the plan`);

  const working = plan.users.map((u) => users.get(u.id)!).filter((u) => u && u.intervals.length);
  const hasSkills = (u: DayUser, v: DayVisit) => v.skills.every((s) => u.skills.includes(s));
  for (const { visit, reason } of plan.unassigned) {
    const v = visits.get(visit.id)!;
    const want = !v.place ? 'noLocation' : !working.some((u) => hasSkills(u, v)) ? 'noUser' : 'noTime';
    if (reason !== want) out.push(`visit ${v.id} unassigned for ${reason}, expected ${want}`);
  }

  let total = 0;
  for (const r of plan.routes) {
    const u = users.get(r.user.id);
    if (!u || !plan.users.some((p) => p.id === r.user.id)) {
      out.push(`route of user ${r.user.id}, not of the plan`);
      continue;
    }
    if (!r.steps.length) out.push(`route of user ${u.id} has no step`);
    total += r.travelSeconds;
    const steps = r.steps.map((s) => ({
      v: visits.get(s.visit.id)!,
      start: Date.parse(s.startTime),
      end: Date.parse(s.endTime),
      travel: s.travelSeconds,
    }));
    // What the route goes around: the user's visits not in the plan, or in it but unassigned
    // (they stay, keeping their user), and leave.
    const fixed = day.visits.filter(
      (v) => v.user === u.id && (!planned.has(v.id) || staying.has(v.id)) && !v.deleted && v.state !== 'cancelled',
    );
    let sumSteps = 0;
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i];
      const v = s.v;
      const at = `user ${u.id}, visit ${v.id}`;
      sumSteps += s.travel;
      if (!hasSkills(u, v)) out.push(`${at}: lacks a skill`);
      if (s.end - s.start !== v.end - v.start) out.push(`${at}: duration not kept`);
      if (v.window && (s.start < v.window[0] || s.start > v.window[1])) out.push(`${at}: starts outside its window`);
      const interval = u.intervals.find(([a, b]) => s.start >= a && s.end <= b);
      if (!interval) {
        out.push(`${at}: outside working hours`);
        continue;
      }
      if (u.leave.some(([a, b]) => s.start < b && s.end > a)) out.push(`${at}: overlaps leave`);
      for (const f of fixed) if (s.start < f.end && s.end > f.start) out.push(`${at}: overlaps visit ${f.id}`);
      if (i > 0 && steps[i - 1].end > s.start) out.push(`${at}: overlaps the previous step`);
      // Where the user comes from: the latest of the previous step, a fixed visit, the end of
      // leave or the interval's start (those two: from home).
      type From = { end: number; place: DayPlace | null; home: boolean };
      const before: From[] = [{ end: interval[0], place: u.home, home: true }];
      if (i > 0 && steps[i - 1].end >= interval[0])
        before.push({ end: steps[i - 1].end, place: steps[i - 1].v.place, home: false });
      for (const f of fixed)
        if (f.end <= s.start && f.end >= interval[0]) before.push({ end: f.end, place: f.place, home: false });
      for (const [, b] of u.leave)
        if (b <= s.start && b >= interval[0]) before.push({ end: b, place: u.home, home: true });
      // Ties (leave ending as a visit does): the step's travel is from one of them.
      const latest = Math.max(...before.map((b) => b.end));
      const needs = before.filter((b) => b.end === latest).map((b) => secs(b.place, v.place));
      const need = needs.find((n) => Math.abs(n - s.travel) <= 1);
      if (need === undefined) out.push(`${at}: travel ${s.travel} s, expected one of ${needs.join(', ')} s`);
      if (s.start < latest + Math.min(...needs) * 1000 - 1000) out.push(`${at}: starts before it can arrive`);
      // Where the user goes next: the next step, a fixed visit, leave or the interval's end (home).
      const after: { start: number; place: DayPlace | null }[] = [{ start: interval[1], place: u.home }];
      if (i + 1 < steps.length && steps[i + 1].start <= interval[1])
        after.push({ start: steps[i + 1].start, place: steps[i + 1].v.place });
      for (const f of fixed)
        if (f.start >= s.end && f.start <= interval[1]) after.push({ start: f.start, place: f.place });
      for (const [a] of u.leave) if (a >= s.end && a <= interval[1]) after.push({ start: a, place: u.home });
      const first = Math.min(...after.map((a) => a.start));
      const toNext = Math.min(...after.filter((a) => a.start === first).map((a) => secs(v.place, a.place)));
      if (s.end + toNext * 1000 - 1000 > first) out.push(`${at}: cannot reach what comes next in time`);
    }
    if (r.travelSeconds < sumSteps) out.push(`route of user ${u.id}: travel below its steps' sum`);
  }
  if (plan.travelSeconds !== total) out.push(`total travel ${plan.travelSeconds}, routes sum to ${total}`);
  return out;
}

const DAY_MS = 86_400_000;
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/**
 * The day as the API shows it (the account is in UTC): the users' hours, homes, skills and leave,
 * and every visit of the date with its job's place and skills, for the independent checker.
 */
export async function dayOf(t: TestApp, a: Tenant, date: string): Promise<Day> {
  const dayStart = Date.parse(`${date}T00:00:00Z`);
  const get = async (url: string) => {
    const res = await call(t.app, a.token, 'GET', url);
    assert.equal(res.status, 200, res.raw);
    return res.body;
  };
  const users = (await get('/users?fields=workingHours,homeLocation,skills&recordsPerPage=500')).users as any[];
  const leave = (await get('/unavailabilities?recordsPerPage=500')).unavailabilities as any[];
  const jobs = new Map(
    ((await get('/jobs?fields=address,requiredSkills&recordsPerPage=500')).jobs as any[]).map((j) => [j.id, j]),
  );
  const visits = (await get('/visits?fields=*&recordsPerPage=500')).visits as any[];
  const day = WEEKDAYS[new Date(dayStart).getUTCDay()];
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));
  const dayUsers: DayUser[] = users.map((u) => ({
    id: u.id,
    home: u.homeLocation ?? null,
    skills: (u.skills ?? []).map((s: { id: number }) => s.id),
    intervals: (u.workingHours ?? [])
      .filter((h: any) => h.day === day)
      .map((h: any) => [dayStart + minutes(h.start) * 60_000, dayStart + minutes(h.end) * 60_000]),
    leave: leave
      .filter((l) => l.user.id === u.id && !l.deleted)
      .map((l) => [Date.parse(l.startTime), Date.parse(l.endTime)]),
  }));
  const dayVisits: DayVisit[] = visits
    .filter((v) => Date.parse(v.startTime) < dayStart + DAY_MS && Date.parse(v.endTime) > dayStart)
    .map((v) => {
      const job = jobs.get(v.job.id);
      return {
        id: v.id,
        user: v.user?.id ?? null,
        place: job?.address?.location ? { lat: job.address.location.lat, lng: job.address.location.lng } : null,
        start: Date.parse(v.startTime),
        end: Date.parse(v.endTime),
        window: v.arrivalWindowStart ? [Date.parse(v.arrivalWindowStart), Date.parse(v.arrivalWindowEnd)] : null,
        skills: (job?.requiredSkills ?? []).map((s: { id: number }) => s.id),
        locked: Boolean(v.locked),
        state: v.state,
        deleted: Boolean(v.deleted),
      };
    });
  return { users: dayUsers, visits: dayVisits, speedKmh: 40 };
}
