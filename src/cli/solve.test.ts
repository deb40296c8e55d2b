import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('./index.js', import.meta.url));
/** A run longer than this is a hang. */
const HANG_MS = 15_000;

/** `fsm solve` with `input` on stdin; a run that outlives HANG_MS is killed and reported as such. */
function fsm(
  args: string[],
  input: string,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // No DATA_DIR nor DATABASE_URL worth the name: solve must not open a database.
    const env = { ...process.env, DATA_DIR: '/nonexistent/fsm-solve-test', DATABASE_URL: '' };
    const child = spawn(process.execPath, [CLI, 'solve', ...args], { env, timeout: HANG_MS, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal) reject(new Error(`fsm solve was killed (${signal}): it hung; stderr: ${stderr}`));
      else resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.on('error', () => {}); // a refusal may come before all the input is read
    child.stdin.end(input);
  });
}

const grid = (n: number) =>
  Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => 10 * Math.abs(i - j)));
const problem = (over: Record<string, unknown> = {}) => ({
  jobs: [
    { id: 1, location_index: 1, service: 5, delivery: [1], time_windows: [[0, 100]] },
    {
      id: 2,
      location_index: 2,
      time_windows: [
        [0, 30],
        [60, 90],
      ],
      skills: [2],
      priority: 50,
    },
    { id: 3, location_index: 3 },
  ],
  vehicles: [
    { id: 1, start_index: 0, end_index: 0, capacity: [4], time_window: [0, 500], skills: [2] },
    { id: 2, start_index: 0 },
  ],
  matrices: { car: { durations: grid(4) } },
  ...over,
});

describe('fsm solve', () => {
  test('solves a problem from stdin within the limit: routes, summary, exit 0', async () => {
    const r = await fsm(['--time-limit', '0.2'], JSON.stringify(problem()));
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.code, 0);
    assert.deepEqual(Object.keys(out.summary).sort(), ['cost', 'duration', 'routes', 'unassigned', 'waiting_time']);
    assert.deepEqual(out.unassigned, []);
    const steps = out.routes.flatMap((route: any) => route.steps);
    assert.deepEqual(
      steps
        .filter((s: any) => s.type === 'job')
        .map((s: any) => s.id)
        .sort(),
      [1, 2, 3],
    );
    for (const route of out.routes) {
      assert.deepEqual(Object.keys(route).sort(), ['cost', 'duration', 'steps', 'vehicle']);
      for (const s of route.steps)
        for (const k of ['type', 'location_index', 'arrival', 'service', 'waiting_time']) assert.ok(k in s, k);
    }
    assert.equal(
      out.summary.cost,
      out.routes.reduce((a: number, route: any) => a + route.cost, 0),
    );
  });

  const refusals: [string, unknown, RegExp][] = [
    ['not JSON', '{"jobs": [', /stdin: not a JSON problem/],
    [
      'a window ending before it starts',
      problem({ jobs: [{ id: 1, location_index: 1, time_windows: [[9, 3]] }] }),
      /jobs\[0\]\.time_windows\[0\]/,
    ],
    [
      'a window that is not two integers',
      problem({
        jobs: [1, 2, 3, 4].map((id) => ({ id, location_index: 1, time_windows: id === 4 ? [[0, 1.5]] : [[0, 99]] })),
      }),
      /jobs\[3\]\.time_windows\[0\]\[1\]/,
    ],
    [
      'more than 2,000 jobs',
      problem({ jobs: Array.from({ length: 2001 }, (_, i) => ({ id: i, location_index: 1 })) }),
      /^error: jobs: has 2001 jobs; at most 2000/,
    ],
    [
      'a matrix that is not square',
      problem({
        matrices: {
          car: {
            durations: [
              [0, 1, 2, 3],
              [1, 0, 1],
              [2, 1, 0, 1],
              [3, 2, 1, 0],
            ],
          },
        },
      }),
      /matrices\.car\.durations\[1\]/,
    ],
    [
      'a matrix not covering an index used',
      problem({ matrices: { car: { durations: grid(3) } } }),
      /matrices\.car\.durations: has 3 rows; the locations used need 4/,
    ],
    [
      'a negative duration',
      problem({
        matrices: {
          car: {
            durations: [
              [0, -1, 2, 3],
              [1, 0, 1, 2],
              [2, 1, 0, 1],
              [3, 2, 1, 0],
            ],
          },
        },
      }),
      /matrices\.car\.durations\[0\]\[1\]/,
    ],
    [
      'a duration that is not an integer',
      problem({
        matrices: {
          car: {
            durations: [
              [0, 1, 2, 3],
              [1, 0, 1, 2],
              [2, 1.5, 0, 1],
              [3, 2, 1, 0],
            ],
          },
        },
      }),
      /matrices\.car\.durations\[2\]\[1\]/,
    ],
    [
      'a job no vehicle reaches within its window',
      problem({
        jobs: [
          { id: 1, location_index: 1 },
          { id: 7, location_index: 3, time_windows: [[0, 5]] },
        ],
        vehicles: [{ id: 1, start_index: 0, time_window: [0, 500] }],
      }),
      /jobs\[1\]\.time_windows: job 7 has no window a vehicle can reach/,
    ],
    ['a vehicle without an id', problem({ vehicles: [{ start_index: 0 }] }), /vehicles\[0\]\.id/],
    ['a priority above 100', problem({ jobs: [{ id: 1, location_index: 1, priority: 101 }] }), /jobs\[0\]\.priority/],
    [
      'skills that are not integers',
      problem({ jobs: [{ id: 1, location_index: 1, skills: ['x'] }] }),
      /jobs\[0\]\.skills\[0\]/,
    ],
  ];
  for (const [what, input, message] of refusals) {
    test(`refuses ${what}: exit 1, the member named on stderr`, async () => {
      const r = await fsm(['--time-limit', '0.2'], typeof input === 'string' ? input : JSON.stringify(input));
      assert.equal(r.code, 1, r.stdout);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    });
  }

  test('a wrong --time-limit is wrong usage: exit 2', async () => {
    for (const limit of ['0', '-1', 'soon', '1e3']) {
      const r = await fsm(['--time-limit', limit], JSON.stringify(problem()));
      assert.equal(r.code, 2, `${limit}: ${r.stderr}`);
      assert.match(r.stderr, /--time-limit/);
    }
  });
});
