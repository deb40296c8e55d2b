import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SERVER = new URL('../src/server.js', import.meta.url).pathname;

/** Starts the server as `npm start` does and resolves with its origin once it prints the line. */
export function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, [SERVER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return { child, ready, output: () => out };
}

test('npm start: SQLite under DATA_DIR, migrations at start, envelope on errors, graceful SIGTERM', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-server-'));
  const s = startServer({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: '' });
  try {
    const origin = await s.ready;
    assert.ok(fs.existsSync(path.join(dataDir, 'fsm.sqlite')));
    const res = await fetch(`${origin}/users`, { headers: { 'x-version': '1.0' } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('content-type'), 'application/json;charset=UTF-8');
    assert.equal((await res.json()).error.code, 1010);
    const exited = new Promise<number | null>((r) => s.child.on('exit', r));
    s.child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    s.child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a bad configuration stops the server with a clear message', async () => {
  const s = startServer({ PORT: 'eighty', DATABASE_URL: '' });
  await assert.rejects(s.ready, /PORT must be an integer/);
});
