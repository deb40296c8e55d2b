import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PG_URL, skipUnless } from '../helpers.js';

const SERVER = new URL('../../src/server.js', import.meta.url).pathname;

/** Starts the server (`npm start`) and waits for it to exit: its code and everything it printed. */
function startAndExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

/** A port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A server whose database cannot be used at start says where it is and what is wrong, in the words
 * of `fsm doctor`, and exits non-zero, never "migration ? failed".
 */
describe('start with a database that cannot be used', () => {
  test('PostgreSQL refusing connections: exit 1 naming host:port and the refusal', { timeout: 60_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-start-'));
    const port = await closedPort();
    try {
      const { code, output } = await startAndExit({
        DATA_DIR: dataDir,
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/fsm`,
      });
      assert.equal(code, 1, output);
      assert.match(output, new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${port}/fsm`));
      assert.match(output, /nothing accepts connections at that host and port/);
      assert.match(output, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
      assert.doesNotMatch(output, /migration \?/);
      assert.doesNotMatch(output, /listening on/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test(
    'a PostgreSQL database that does not exist: exit 1 naming it',
    { skip: skipUnless('postgres'), timeout: 60_000 },
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-start-'));
      const url = new URL(PG_URL!);
      url.pathname = `/fsm_missing_${process.pid}`;
      try {
        const { code, output } = await startAndExit({ DATA_DIR: dataDir, DATABASE_URL: url.toString() });
        assert.equal(code, 1, output);
        assert.match(output, /the database does not exist \(create it, or fix the name in DATABASE_URL\)/);
        assert.match(output, new RegExp(`database "fsm_missing_${process.pid}" does not exist`));
        assert.doesNotMatch(output, /migration \?/);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );

  test('an SQLite file that is not a database: exit 1 saying so', { timeout: 60_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-start-'));
    fs.writeFileSync(path.join(dataDir, 'fsm.sqlite'), 'this is not a database, just some text '.repeat(200));
    try {
      const { code, output } = await startAndExit({ DATA_DIR: dataDir, DATABASE_URL: '' });
      assert.equal(code, 1, output);
      assert.match(
        output,
        new RegExp(`SQLite at ${path.join(dataDir, 'fsm.sqlite').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`),
      );
      assert.match(output, /the file is not a SQLite database/);
      assert.doesNotMatch(output, /migration \?/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
