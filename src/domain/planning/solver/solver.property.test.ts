import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkSolution } from './check.js';
import { parseProblem, ProblemError } from './parse.js';
import { solve } from './solve.js';
import { toVroom } from './output.js';
import type { VroomJob, VroomProblem, VroomVehicle } from './types.js';

/** Random small problems: matrices with no triangle inequality nor symmetry, windows, amounts, skills. */
const problems: fc.Arbitrary<VroomProblem> = fc.integer({ min: 1, max: 7 }).chain((locs) => {
  const loc = fc.integer({ min: 0, max: locs - 1 });
  const window = fc
    .tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 120 }))
    .map(([a, len]): [number, number] => [a, a + len]);
  const skills = fc.option(fc.uniqueArray(fc.integer({ min: 1, max: 3 }), { maxLength: 2 }), { nil: undefined });
  const job = fc.record(
    {
      location_index: loc,
      service: fc.integer({ min: 0, max: 30 }),
      delivery: fc.integer({ min: 0, max: 6 }).map((d) => [d]),
      time_windows: fc.array(window, { minLength: 1, maxLength: 3 }),
      skills,
      priority: fc.integer({ min: 0, max: 100 }),
    },
    { requiredKeys: ['location_index'] },
  );
  const vehicle = fc.record(
    {
      start_index: loc,
      end_index: loc,
      capacity: fc.integer({ min: 0, max: 15 }).map((c) => [c]),
      time_window: fc
        .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 50, max: 600 }))
        .map(([a, len]): [number, number] => [a, a + len]),
      skills,
    },
    { requiredKeys: [] },
  );
  return fc
    .record({
      jobs: fc.array(job, { maxLength: 12 }),
      vehicles: fc.array(vehicle, { minLength: 1, maxLength: 3 }),
      durations: fc.array(fc.array(fc.integer({ min: 0, max: 100 }), { minLength: locs, maxLength: locs }), {
        minLength: locs,
        maxLength: locs,
      }),
    })
    .map(({ jobs, vehicles, durations }) => {
      return {
        jobs: jobs.map((j, i) => ({ id: 100 + i, ...j }) as VroomJob),
        vehicles: vehicles.map((v, i) => ({ id: i + 1, ...v }) as VroomVehicle),
        matrices: { car: { durations } },
      };
    });
});

/** Job j alone on vehicle v: its skills held, its delivery carried, a window reached and the end in time. */
function servableAlone(p: VroomProblem, job: VroomJob, v: VroomVehicle): boolean {
  const d = p.matrices.car.durations;
  if (!(job.skills ?? []).every((s) => (v.skills ?? []).includes(s))) return false;
  if (v.capacity && (job.delivery ?? [0])[0] > v.capacity[0]) return false;
  const [open, close] = v.time_window ?? [0, Infinity];
  const arrival = open + (v.start_index === undefined ? 0 : d[v.start_index][job.location_index]);
  const back = (s: number) =>
    s + (job.service ?? 0) + (v.end_index === undefined ? 0 : d[job.location_index][v.end_index]);
  return (job.time_windows ?? [[0, Infinity]]).some(([a, b]) => arrival <= b && back(Math.max(a, arrival)) <= close);
}

test('random small problems: the answer is feasible, every job once, none left out that an idle vehicle could take', () => {
  let solved = 0;
  fc.assert(
    fc.property(problems, fc.integer({ min: 1, max: 1000 }), (problem, seed) => {
      let model;
      try {
        model = parseProblem(JSON.parse(JSON.stringify(problem)));
      } catch (err) {
        // The one refusal random problems meet: a job no vehicle reaches in time, named.
        assert.ok(err instanceof ProblemError);
        const m = /^jobs\[(\d+)\]\.time_windows: /.exec(err.message);
        assert.ok(m, err.message);
        const job = problem.jobs[Number(m[1])];
        assert.ok(!problem.vehicles.some((v) => servableAlone(problem, { ...job, skills: [], delivery: [0] }, v)));
        return;
      }
      const answer = toVroom(model, solve(model, { timeLimitMs: 2000, maxIterations: 40, seed }));
      assert.deepEqual(checkSolution(problem, answer), []);
      const used = new Set(answer.routes.map((r) => r.vehicle));
      for (const u of answer.unassigned) {
        const job = problem.jobs.find((j) => j.id === u.id)!;
        for (const v of problem.vehicles.filter((x) => !used.has(x.id)))
          assert.ok(!servableAlone(problem, job, v), `job ${u.id} left out, vehicle ${v.id} idle and able`);
      }
      solved++;
    }),
    { numRuns: 300, seed: 20261201 },
  );
  assert.ok(solved > 50, `only ${solved} problems solved (the rest refused)`);
});
