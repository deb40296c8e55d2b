import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { solveInWorker, SolverWorker } from './in-worker.js';
import { parseProblem } from './parse.js';
import { parseSolomon, solomonToVroom } from './solomon.js';
import { solve } from './solve.js';

const FIXTURES = fileURLToPath(new URL('../../../../../test/fixtures/solomon/', import.meta.url));
const model = () =>
  parseProblem(
    JSON.parse(JSON.stringify(solomonToVroom(parseSolomon(fs.readFileSync(`${FIXTURES}R101.txt`, 'utf8'))))),
  );

/** The solver on a worker thread: the same answer as in-thread for a seed, and the caller's event loop stays free. */
test('solveInWorker answers as solve does for a seed and an iteration budget', async () => {
  const opts = { timeLimitMs: 60_000, maxIterations: 400, seed: 3 };
  assert.deepEqual(await solveInWorker(model(), opts), solve(model(), opts));
});

test("during a 1 s solve on the worker, the caller's timers keep ticking", async () => {
  const worker = new SolverWorker();
  try {
    let last = performance.now();
    let longest = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      ticks++;
    }, 10);
    const started = performance.now();
    const solution = await worker.solve(model(), { timeLimitMs: 1000, seed: 1 });
    const took = performance.now() - started;
    clearInterval(timer);
    assert.equal(solution.unassigned.length, 0);
    assert.ok(took >= 900, `the solve took ${took} ms`);
    // Solving on this thread would hold the timers for the whole second; on a loaded machine a
    // tick may still come late, never by most of the solve.
    assert.ok(longest < 600, `the longest gap between ticks was ${longest.toFixed(0)} ms`);
    assert.ok(ticks >= 10, `${ticks} ticks`);
  } finally {
    await worker.close();
  }
});
