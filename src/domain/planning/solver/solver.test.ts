import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkSolution } from './check.js';
import { parseProblem } from './parse.js';
import { parseSolomon, solomonToVroom } from './solomon.js';
import { solve } from './solve.js';
import { toVroom } from './output.js';
import type { VroomProblem, VroomSolution } from './types.js';

const FIXTURES = fileURLToPath(new URL('../../../../../test/fixtures/solomon/', import.meta.url));

const run = (problem: VroomProblem, timeLimitMs = 300, maxIterations?: number) => {
  const model = parseProblem(JSON.parse(JSON.stringify(problem)));
  return toVroom(model, solve(model, { timeLimitMs, seed: 7, maxIterations }));
};

/** A line of locations 0..n-1, one unit of time apart. */
const line = (n: number) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => Math.abs(i - j)));

/**
 * The solver on Solomon instances (feasibility at a short limit; quality is the bench's) and on
 * small problems whose answer is known, and the checker on answers broken on purpose.
 */
describe('solver on Solomon fixtures', () => {
  for (const name of ['C101', 'R101', 'RC201', 'R211']) {
    test(`${name}: every job served, the answer feasible`, () => {
      const problem = solomonToVroom(parseSolomon(fs.readFileSync(`${FIXTURES}${name}.txt`, 'utf8')));
      const started = performance.now();
      const answer = run(problem, 300);
      const took = performance.now() - started;
      assert.deepEqual(checkSolution(problem, answer), []);
      // Within its limit, give or take a busy machine.
      assert.ok(took < 1500, `took ${took.toFixed(0)} ms`);
      assert.equal(answer.unassigned.length, 0);
      assert.ok(answer.routes.length <= 25);
    });
  }
});

describe('solver on small problems', () => {
  test('deterministic for a seed and an iteration budget', () => {
    const problem = solomonToVroom(parseSolomon(fs.readFileSync(`${FIXTURES}R101.txt`, 'utf8')));
    assert.deepEqual(run(problem, 60_000, 300), run(problem, 60_000, 300));
  });

  test('when not every job can be served, the higher priority is', () => {
    // One vehicle with room for one delivery; three jobs want it.
    const problem: VroomProblem = {
      jobs: [
        { id: 1, location_index: 1, delivery: [1], priority: 10 },
        { id: 2, location_index: 2, delivery: [1], priority: 90 },
        { id: 3, location_index: 1, delivery: [1] },
      ],
      vehicles: [{ id: 1, start_index: 0, end_index: 0, capacity: [1] }],
      matrices: { car: { durations: line(3) } },
    };
    const answer = run(problem, 100);
    assert.deepEqual(checkSolution(problem, answer), []);
    assert.deepEqual(
      answer.routes[0].steps.filter((s) => s.type === 'job').map((s) => s.id),
      [2],
    );
    assert.deepEqual(answer.unassigned.map((u) => u.id).sort(), [1, 3]);
  });

  test('a second window, skills and open routes', () => {
    const problem: VroomProblem = {
      jobs: [
        {
          id: 10,
          location_index: 1,
          service: 5,
          time_windows: [
            [0, 2],
            [50, 60],
          ],
        },
        { id: 11, location_index: 2, skills: [4] },
        { id: 12, location_index: 3, time_windows: [[3, 3]] },
      ],
      vehicles: [
        { id: 1, start_index: 0, time_window: [0, 100] },
        { id: 2, end_index: 3, skills: [4, 5], time_window: [20, 100] },
      ],
      matrices: { car: { durations: line(4), distances: line(4) } },
    };
    const answer = run(problem, 100);
    assert.deepEqual(checkSolution(problem, answer), []);
    assert.equal(answer.unassigned.length, 0);
    const byVehicle = new Map(answer.routes.map((r) => [r.vehicle, r]));
    // Job 11 needs skill 4: only vehicle 2 has it. Vehicle 2 has no start step, vehicle 1 no end step.
    assert.ok(byVehicle.get(2)!.steps.some((s) => s.id === 11));
    assert.equal(byVehicle.get(2)!.steps[0].type, 'job');
    if (byVehicle.has(1)) assert.equal(byVehicle.get(1)!.steps.at(-1)!.type, 'job');
  });

  test('no jobs: no routes', () => {
    const answer = run({ jobs: [], vehicles: [{ id: 1 }], matrices: { car: { durations: [[0]] } } });
    assert.deepEqual(answer.routes, []);
    assert.equal(answer.summary.cost, 0);
  });
});

describe('the checker', () => {
  const problem = solomonToVroom(parseSolomon(fs.readFileSync(`${FIXTURES}C101.txt`, 'utf8')));
  const good = run(problem, 100);
  const broken = (change: (a: VroomSolution) => void) => {
    const a = JSON.parse(JSON.stringify(good)) as VroomSolution;
    change(a);
    return checkSolution(problem, a);
  };

  test('finds a job served twice, a job missing, a window missed, a capacity passed, a skill lacking', () => {
    assert.match(broken((a) => a.unassigned.push({ id: a.routes[0].steps[1].id! })).join(), /already in/);
    assert.match(
      broken((a) => {
        a.routes[0].steps.splice(1, 1);
      }).join(),
      /neither served nor unassigned/,
    );
    assert.match(broken((a) => (a.routes[0].steps[1].waiting_time += 1_000_000)).join(), /outside its windows/);
    const tight = { ...problem, vehicles: problem.vehicles.map((v) => ({ ...v, capacity: [10] })) };
    assert.match(checkSolution(tight, good).join(), /over the capacity/);
    const skilled = { ...problem, jobs: problem.jobs.map((j, i) => (i === 0 ? { ...j, skills: [1] } : j)) };
    assert.match(checkSolution(skilled, good).join(), /needs skill 1/);
  });
});
