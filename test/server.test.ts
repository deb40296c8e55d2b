import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SERVER = new URL('../src/server.js', import.meta.url).pathname;

/** Starts the server as `npm start` does and resolves with its origin once it prints the line. */
export function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (https?:\/\/[^\s]+)/.exec(out);
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

test('TLS_CERT_FILE and TLS_KEY_FILE make the server speak HTTPS itself', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-tls-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  const { spawnSync } = await import('node:child_process');
  const gen = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
  ]);
  assert.equal(gen.status, 0, String(gen.stderr));
  const s = startServer({ DATA_DIR: dir, PORT: '0', DATABASE_URL: '', TLS_CERT_FILE: cert, TLS_KEY_FILE: key });
  try {
    const origin = await s.ready;
    assert.match(origin, /^https:\/\/127\.0\.0\.1:\d+$/);
    const https = await import('node:https');
    const port = Number(new URL(origin).port);
    const res = await new Promise<{ status: number; hsts: unknown }>((resolve, reject) => {
      https
        .get(
          { host: '127.0.0.1', port, path: '/users', headers: { 'x-version': '1.0' }, rejectUnauthorized: false },
          (r) => {
            r.resume();
            resolve({ status: r.statusCode!, hsts: r.headers['strict-transport-security'] });
          },
        )
        .on('error', reject);
    });
    assert.equal(res.status, 401);
    assert.match(String(res.hsts), /max-age=/, 'an https origin sends HSTS');
  } finally {
    s.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
