// Runs every compiled test file (dist/**/*.test.js, and the client package's packages/client/dist-test) with node's test runner.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function find(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? find(p) : e.name.endsWith('.test.js') ? [p] : [];
  });
}

const only = process.argv.slice(2);
const files = [...find('dist/src'), ...find('dist/test'), ...find('dist/scripts'), ...find('packages/client/dist-test')]
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .filter((f) => !f.includes(`${path.sep}reliability${path.sep}`) || process.env.FSM_RELIABILITY === '1')
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/');
  process.exit(1);
}
if (!process.env.TEST_DATABASE_URL) {
  console.log('TEST_DATABASE_URL is not set: the PostgreSQL suites are reported as skipped.');
}
// A hang fails instead of holding CI: each test file (node's runner times a file as one test too)
// has TEST_TIMEOUT_MS (10 minutes; the longest file takes under two on a quiet machine), and the
// whole run RUN_TIMEOUT_MS (40 minutes; it takes about six).
const testTimeout = Number(process.env.TEST_TIMEOUT_MS ?? 600_000);
// Test files share no state (each makes its own databases, directories and ports), and most of
// their time is spent waiting on PostgreSQL, child processes and timers: TEST_CONCURRENCY files run
// at once (default 3 on this project's 2-core machines).
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 3);
const runTimeout = Number(process.env.RUN_TIMEOUT_MS ?? 40 * 60_000);
const r = spawnSync(
  process.execPath,
  [
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/test-summary.mjs',
    '--test-reporter-destination=stdout',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${testTimeout}`,
    ...files,
  ],
  { stdio: 'inherit', timeout: runTimeout, killSignal: 'SIGKILL' },
);
if (r.error?.code === 'ETIMEDOUT') console.error(`the test run passed ${runTimeout} ms and was stopped`);
process.exit(r.status ?? 1);
