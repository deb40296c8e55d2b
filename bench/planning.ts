import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import type { Target } from './report.js';
import type { RunningServer } from './server.js';
import { rng } from './seed.js';

/**
 * Planning's rows (PRODUCT §15, issue 45), on our server of the main data set, in interleaved
 * turns so the machine's drift falls on all alike:
 * - a plan of a realistic day: 20 users (working hours, home locations, skills, three on leave
 *   at midday), 150 visits (a third needing a skill, 40 % with an arrival window), 3 locked
 *   visits; the time it answers in against its time limit, what it placed, its travel;
 * - W1 alone and W1 while plans of that day are solved one after another (the solver runs on a
 *   worker thread: its requests should not wait for it);
 * - `GET /jobs/:id/slots` over 14 days of 20 users with 6 visits a day each, against W1:
 *   target >= 0.25 of W1's requests per second.
 * `BENCH_ONLY=planning` runs these rows alone (the data set is still the main one).
 */
export interface PlanningContext {
  server: RunningServer;
  /** The JSON request headers of an Administrator of the first account. */
  headers: Record<string, string>;
  accountId: number;
  w1: Workload;
  load: LoadSettings;
  turnOf(load: LoadSettings, round: number): LoadSettings;
  mergeTurns(ms: Measurement[]): Measurement | undefined;
  record(key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string): void;
  log(m: string): void;
}

const ROUNDS = 2;
const USERS = 20;
const VISITS = 150;
/** A Monday; the slots' fortnight follows it. */
const DAY = '2031-03-03';
const TIME_LIMIT = 5;
const SLOT_DAYS = 14;
const SLOT_VISITS_A_DAY = 6;

const at = (date: string, hhmm: string) => `${date}T${hhmm}:00Z`;
const dayAfter = (date: string, n: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const hhmm = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

export async function benchPlanning(c: PlanningContext): Promise<{ ratios: string[]; targets: Target[] }> {
  const { server, headers } = c;
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const post = async (collection: string, items: unknown[]) => {
    const ids: number[] = [];
    for (let i = 0; i < items.length; i += 100)
      ids.push(
        ...(
          (await api('POST', `/${collection}`, { [collection]: items.slice(i, i + 100) }))[collection] as {
            id: number;
          }[]
        ).map((x) => x.id),
      );
    return ids;
  };
  const r = rng(45);
  const tag = Date.now().toString(36);
  const near = () => ({
    location: {
      lat: Math.round((51.5 + (r() - 0.5) * 0.24) * 1e5) / 1e5,
      lng: Math.round((-0.12 + (r() - 0.5) * 0.4) * 1e5) / 1e5,
    },
  });
  c.log(
    `planning: ${USERS} users, ${VISITS} visits of ${DAY}, ${USERS * SLOT_DAYS * SLOT_VISITS_A_DAY} visits for slots`,
  );
  const skills = await post(
    'skills',
    ['Gas', 'Electric', 'Heat pumps', 'Boilers'].map((name) => ({ name: `${name} ${tag}` })),
  );
  const allDays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
    day,
    start: '08:00',
    end: '18:00',
  }));
  const users = await post(
    'users',
    Array.from({ length: USERS }, (_, i) => ({
      account: { id: c.accountId },
      firstName: 'Planned',
      lastName: `Tech ${i}`,
      email: `planned.${tag}.${i}@example.com`,
      mobile: `+4477009${String(i).padStart(5, '0')}`,
      isAssignable: true,
      workingHours: allDays,
      homeLocation: near().location,
      skills: skills.filter(() => r() < 0.5).map((id) => ({ id })),
    })),
  );
  await post(
    'unavailabilities',
    users.slice(0, 3).map((id) => ({ user: { id }, startTime: at(DAY, '12:00'), endTime: at(DAY, '14:00') })),
  );
  const jobs = await post(
    'jobs',
    Array.from({ length: VISITS }, (_, i) => ({
      title: `Planned job ${i}`,
      address: near(),
      requiredSkills: r() < 0.33 ? [{ id: skills[Math.floor(r() * skills.length)] }] : [],
    })),
  );
  const visits = await post(
    'visits',
    jobs.map((job, i) => {
      const minutes = 30 + 15 * Math.floor(r() * 5);
      const start = 8 * 60 + 30 * Math.floor(r() * 16);
      const windowStart = 8 * 60 + 60 * Math.floor(r() * 8);
      return {
        job: { id: job },
        label: `Planned visit ${i}`,
        startTime: at(DAY, hhmm(start)),
        endTime: at(DAY, hhmm(start + minutes)),
        ...(r() < 0.4
          ? { arrivalWindowStart: at(DAY, hhmm(windowStart)), arrivalWindowEnd: at(DAY, hhmm(windowStart + 120)) }
          : {}),
      };
    }),
  );
  await post(
    'visits',
    [0, 1, 2].map((k) => ({
      job: { id: jobs[k] },
      user: { id: users[5 + k] },
      label: 'Locked visit',
      startTime: at(DAY, '11:00'),
      endTime: at(DAY, '12:00'),
      locked: true,
    })),
  );
  // The slots' fortnight: 6 half-hour visits a day for every user, a gap of 4.5 hours at midday.
  const slotStarts = [8 * 60, 9 * 60, 10 * 60, 15 * 60, 16 * 60, 17 * 60];
  await post(
    'visits',
    Array.from({ length: SLOT_DAYS }, (_, d) => dayAfter(DAY, d + 1)).flatMap((date) =>
      users.flatMap((user) =>
        slotStarts.slice(0, SLOT_VISITS_A_DAY).map((start) => ({
          job: { id: jobs[Math.floor(r() * jobs.length)] },
          user: { id: user },
          label: 'Booked',
          startTime: at(date, hhmm(start)),
          endTime: at(date, hhmm(start + 30)),
        })),
      ),
    ),
  );
  const [slotJob] = await post('jobs', [{ title: 'To book', address: near() }]);
  const planItem = {
    date: DAY,
    users: users.map((id) => ({ id })),
    visits: visits.map((id) => ({ id })),
    timeLimitSeconds: TIME_LIMIT,
  };

  // The plan alone.
  const started = Date.now();
  const plan = (await api('POST', '/plans', { plans: [planItem] })).plans[0] as {
    routes: { steps: unknown[] }[];
    unassigned: { reason: string }[];
    travelSeconds: number;
    distanceKm: number;
    currentTravelSeconds: number;
    computeMilliseconds: number;
    warnings: string[];
  };
  const answeredMs = Date.now() - started;
  const routed = plan.routes.reduce((n, route) => n + route.steps.length, 0);
  const reasons = Object.entries(
    plan.unassigned.reduce<Record<string, number>>((acc, u) => ({ ...acc, [u.reason]: (acc[u.reason] ?? 0) + 1 }), {}),
  )
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const planNote = `${routed}/${VISITS} visits routed on ${plan.routes.length} routes (unassigned: ${reasons || 'none'}), travel ${(plan.travelSeconds / 3600).toFixed(1)} h over ${plan.distanceKm.toFixed(0)} km; answered in ${answeredMs} ms, solver ${plan.computeMilliseconds} ms, limit ${TIME_LIMIT} s${plan.warnings.length ? `; warnings: ${plan.warnings.join('; ')}` : ''}`;
  c.record('plan', `plan of a day (${USERS} users, ${VISITS} visits, 3 locked)`, undefined, undefined, planNote);

  // W1 alone, W1 while plans are solved back to back, and slots: interleaved turns.
  const slotsPath = `/jobs/${slotJob}/slots?from=${encodeURIComponent(at(dayAfter(DAY, 1), '00:00'))}&to=${encodeURIComponent(at(dayAfter(DAY, 1 + SLOT_DAYS), '00:00'))}`;
  const firstSlots = (await api('GET', slotsPath)) as { slots: unknown[]; metadata: { recordsCount: number } };
  const slots: Workload = { method: 'GET', headers: c.w1.headers, path: slotsPath };
  // The same fortnight from a second never asked before: the answer computed, not remembered.
  let fresh = 0;
  const slotsFresh: Workload = {
    method: 'GET',
    headers: c.w1.headers,
    path: () => {
      const from = new Date(Date.parse(at(dayAfter(DAY, 1), '00:00')) + ++fresh * 1000).toISOString();
      const to = at(dayAfter(DAY, 1 + SLOT_DAYS), '00:00');
      return `/jobs/${slotJob}/slots?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    },
  };
  const turns = {
    w1: [] as Measurement[],
    w1Solving: [] as Measurement[],
    slots: [] as Measurement[],
    slotsFresh: [] as Measurement[],
  };
  let solves = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const turn = c.turnOf(c.load, round);
    turns.w1.push(await measure(server.url, c.w1, turn, server));
    let solving = true;
    const solver = (async () => {
      while (solving) {
        await api('POST', '/plans', { plans: [planItem] });
        solves++;
      }
    })();
    turns.w1Solving.push(await measure(server.url, c.w1, turn, server));
    solving = false;
    await solver;
    turns.slots.push(await measure(server.url, slots, turn, server));
    turns.slotsFresh.push(await measure(server.url, slotsFresh, turn, server));
  }
  const w1 = c.mergeTurns(turns.w1);
  const w1Solving = c.mergeTurns(turns.w1Solving);
  const slotsM = c.mergeTurns(turns.slots);
  const slotsFreshM = c.mergeTurns(turns.slotsFresh);
  const rss = server.peakRss().max;
  c.record('W1plan', `W1 GET /users, ${ROUNDS} turns beside the plans`, w1, rss);
  c.record(
    'W1solving',
    `W1 while plans are solved (${solves} solves of ${TIME_LIMIT} s), ${ROUNDS} turns`,
    w1Solving,
    rss,
  );
  c.record(
    'slots',
    `GET /jobs/ID/slots, ${SLOT_DAYS} days x ${USERS} users (${firstSlots.metadata.recordsCount} slots), ${ROUNDS} turns`,
    slotsM,
    rss,
  );
  c.record(
    'slotsFresh',
    `GET /jobs/ID/slots, ${SLOT_DAYS} days x ${USERS} users, each computed (a from never asked), ${ROUNDS} turns`,
    slotsFreshM,
    rss,
  );
  const slotsRatio = slotsM && w1 ? slotsM.requestsPerSecond / w1.requestsPerSecond : undefined;
  const freshRatio = slotsFreshM && w1 ? slotsFreshM.requestsPerSecond / w1.requestsPerSecond : undefined;
  const rateRatio = w1 && w1Solving ? w1Solving.requestsPerSecond / w1.requestsPerSecond : undefined;
  const f2 = (v?: number) => (v === undefined ? 'n/a' : v.toFixed(2));
  return {
    ratios: [
      `  plan of a day: ${planNote}`,
      `  W1 while solving / W1 alone (interleaved turns): rate ${f2(rateRatio)}, p99 ${w1Solving?.p99 ?? 'n/a'} ms / ${w1?.p99 ?? 'n/a'} ms (the solver thread takes one of the 2 cores autocannon and the server share)`,
      `  slots over 14 days of 20 users / W1: asked again (remembered, as W1 is) ${f2(slotsRatio)}, each computed ${f2(freshRatio)}`,
    ],
    targets: [
      {
        name: 'plan of a day answered within its time limit + 1 s (ms)',
        value: answeredMs,
        ok: (v) => v <= TIME_LIMIT * 1000 + 1000,
        want: `<= ${TIME_LIMIT * 1000 + 1000}`,
      },
      {
        name: 'slots (14 days x 20 users) / W1 requests per second',
        value: slotsRatio,
        ok: (v) => v >= 0.25,
        want: '>= 0.25',
      },
    ],
  };
}
