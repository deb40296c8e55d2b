import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DIALECTS, addUser, suiteWithTenants, call, skipUnless } from '../../../test/helpers.js';
import { checkPlan, dayOf, type PlanShown } from '../../../test/plan-checker.js';

/** A random small day: users with hours, homes (or none), skills and leave; visits, some locked. */
const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
const place = fc.record({ lat: fc.integer({ min: 0, max: 400 }), lng: fc.integer({ min: 0, max: 400 }) }).map((p) => ({
  lat: Math.round((51.4 + p.lat / 2000) * 1e5) / 1e5,
  lng: Math.round((-0.3 + p.lng / 2000) * 1e5) / 1e5,
}));
const userArb = fc.record({
  // One interval, or two with a gap (minutes of the day, on the quarter hour).
  hours: fc.oneof(
    fc
      .tuple(fc.integer({ min: 24, max: 40 }), fc.integer({ min: 8, max: 40 }))
      .map(([s, l]) => [[s * 15, Math.min(95, s + l) * 15]]),
    fc.tuple(fc.integer({ min: 30, max: 36 }), fc.integer({ min: 2, max: 8 })).map(([mid, gap]) => [
      [28 * 15, mid * 15],
      [(mid + gap) * 15, 72 * 15],
    ]),
  ),
  home: fc.option(place, { freq: 4 }),
  skills: fc.subarray([0, 1]),
  leave: fc.option(fc.tuple(fc.integer({ min: 32, max: 64 }), fc.integer({ min: 2, max: 12 })), { freq: 2 }),
});
const visitArb = fc.record({
  place: fc.option(place, { freq: 8 }),
  skills: fc.subarray([0, 1], { maxLength: 1 }),
  start: fc.integer({ min: 28, max: 68 }),
  duration: fc.integer({ min: 1, max: 8 }),
  window: fc.option(fc.integer({ min: 2, max: 12 }), { freq: 3 }),
  // Assigned to one of the users (by position), maybe locked (then it stays, not in the plan).
  user: fc.option(fc.nat(2), { freq: 2 }),
  locked: fc.boolean(),
});
const dayArb = fc.record({
  users: fc.array(userArb, { minLength: 1, maxLength: 3 }),
  visits: fc.array(visitArb, { minLength: 2, maxLength: 7 }),
});

for (const dialect of DIALECTS) {
  describe(`plans, random small days (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);
    let skills: number[];
    before(async () => {
      const res = await call(t.app, a.token, 'POST', '/skills', { skills: [{ name: 'One' }, { name: 'Two' }] });
      skills = res.body.skills.map((s: { id: number }) => s.id);
    });

    it('every plan holds its invariants (independent checker), answered within the limit plus a second', async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(dayArb, async (day) => {
          // A Monday of its own per run: the day's visits are only this run's.
          const date = new Date(Date.UTC(2031, 0, 6 + 7 * run++)).toISOString().slice(0, 10);
          const at = (quarter: number) => `${date}T${hhmm(quarter * 15)}:00Z`;
          const users: number[] = [];
          for (const u of day.users) {
            const id = (
              await addUser(t, a, 'employee', {
                workingHours: u.hours.map(([s, e]) => ({ day: 'mon', start: hhmm(s), end: hhmm(e) })),
                homeLocation: u.home,
                skills: u.skills.map((i) => ({ id: skills[i] })),
              })
            ).id;
            users.push(id);
            if (u.leave) {
              const [s, l] = u.leave;
              const res = await call(t.app, a.token, 'POST', '/unavailabilities', {
                unavailabilities: [{ user: { id }, startTime: at(s), endTime: at(Math.min(95, s + l)) }],
              });
              assert.equal(res.status, 200, res.raw);
            }
          }
          const planned: number[] = [];
          for (const v of day.visits) {
            const job = await call(t.app, a.token, 'POST', '/jobs', {
              jobs: [
                {
                  title: 'Job',
                  ...(v.place ? { address: { location: v.place } } : {}),
                  requiredSkills: v.skills.map((i) => ({ id: skills[i] })),
                },
              ],
            });
            assert.equal(job.status, 200, job.raw);
            const user = v.user === null ? undefined : users[v.user % users.length];
            const locked = user !== undefined && v.locked;
            const res = await call(t.app, a.token, 'POST', '/visits', {
              visits: [
                {
                  job: { id: job.body.jobs[0].id },
                  label: 'Visit',
                  startTime: at(v.start),
                  endTime: at(v.start + v.duration),
                  ...(user === undefined ? {} : { user: { id: user } }),
                  ...(locked ? { locked: true } : {}),
                  ...(v.window === null
                    ? {}
                    : { arrivalWindowStart: at(v.start - 1), arrivalWindowEnd: at(v.start - 1 + v.window) }),
                },
              ],
            });
            assert.equal(res.status, 200, res.raw);
            if (!locked) planned.push(res.body.visits[0].id);
          }
          const started = Date.now();
          const res = await call(t.app, a.token, 'POST', '/plans', {
            plans: [
              { date, users: users.map((id) => ({ id })), visits: planned.map((id) => ({ id })), timeLimitSeconds: 1 },
            ],
          });
          const took = Date.now() - started;
          assert.equal(res.status, 200, res.raw);
          // Within the limit plus a second, with slack for a shared, busy machine.
          assert.ok(took < 1000 + 1000 + 1500, `answered in ${took} ms`);
          const p = res.body.plans[0] as PlanShown;
          const broken = checkPlan(await dayOf(t, a, date), p);
          assert.deepEqual(broken, [], JSON.stringify({ day, plan: p }));
        }),
        {
          numRuns: Number(process.env.PLAN_RUNS ?? 5),
          seed: Number(process.env.PLAN_SEED ?? 20261202),
          endOnFailure: true,
        },
      );
    });
  });
}
