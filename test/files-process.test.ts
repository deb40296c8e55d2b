import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DIALECTS, skipUnless } from './helpers.js';
import { createSite, sleep, startServer, type Site } from './reliability/process.js';
import { freePort } from './reliability/balancer.js';
import { startS3, type TestS3 } from './s3.js';

/**
 * The file store as the server process meets it (issues 25 and 33): a shutdown is not held by an
 * upload that never finishes; the staging files of a SIGKILLed process are swept at the next
 * start; a bucket that does not exist or credentials the store refuses stop the start, and
 * `fsm doctor` says so.
 */
const CLI = new URL('../src/cli/index.js', import.meta.url).pathname;
const staging = (site: Site) => path.join(site.db.dataDir, 'files', 'tmp');
const staged = (site: Site) => (fs.existsSync(staging(site)) ? fs.readdirSync(staging(site)) : []);

async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50)) if (check()) return true;
  return check();
}

/** An upload of 10 MiB of which 1 MiB is sent; the connection is then held open, sending nothing. */
function heldUpload(origin: string, token: string) {
  const { port } = new URL(origin);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST /files/upload?name=held.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Version: 1.0\r\n` +
      `Content-Type: application/octet-stream\r\nContent-Length: ${10 << 20}\r\n\r\n`,
  );
  socket.write(crypto.randomBytes(1 << 20));
  return socket;
}

const fsm = (env: Record<string, string>, ...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

for (const dialect of DIALECTS) {
  describe(`the server process and its file store (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let site: Site;
    let s3: TestS3;
    before(async () => {
      site = await createSite(dialect);
      s3 = await startS3({ timeout: '1s' });
    });
    after(async () => {
      await s3?.close();
      await site?.close();
    });

    test('SIGTERM with an upload held open: the process exits promptly and keeps nothing of it', async () => {
      const server = await startServer({ ...site.env, BODY_TIMEOUT: '60s' });
      const socket = heldUpload(server.origin, site.token);
      try {
        assert.ok(await eventually(() => staged(site).length === 1), 'the upload is being staged');
        const started = Date.now();
        server.child.kill('SIGTERM');
        assert.equal(await server.exited, 0, server.output());
        const took = Date.now() - started;
        assert.ok(took < 5000, `exited ${took} ms after SIGTERM, although BODY_TIMEOUT is 60 s`);
        assert.deepEqual(staged(site), []);
      } finally {
        socket.destroy();
        server.child.kill('SIGKILL');
      }
    });

    test('the staging files of a SIGKILLed process are swept when the server starts again', async () => {
      const first = await startServer(site.env);
      const socket = heldUpload(first.origin, site.token);
      try {
        assert.ok(await eventually(() => staged(site).length === 1));
        first.child.kill('SIGKILL');
        await first.exited;
      } finally {
        socket.destroy();
      }
      const left = staged(site);
      assert.equal(left.length, 1, 'SIGKILL left its staging file');
      // A staging file of another live process on this host is kept (it may be receiving).
      const live = `${left[0].split('~')[0]}~${process.pid}~000000000000~${'0'.repeat(24)}`;
      fs.writeFileSync(path.join(staging(site), live), 'in progress');
      const second = await startServer(site.env);
      try {
        assert.deepEqual(staged(site), [live], 'swept before the server took its first request');
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
        fs.rmSync(path.join(staging(site), live));
      }
    });

    test('FILES_STORE=s3: a missing bucket, refused credentials or no store stop the start; doctor says why', async () => {
      const closed = `http://127.0.0.1:${await freePort()}`;
      const cases: [Record<string, string>, RegExp][] = [
        [
          { S3_BUCKET: 'no-such-bucket' },
          /bucket no-such-bucket at http:\/\/127\.0\.0\.1:\d+\): .*the bucket does not exist/,
        ],
        // s3rver checks the key id only (it does not verify SigV4 signatures), so an unknown id stands in for wrong credentials.
        [
          { S3_ACCESS_KEY_ID: 'nobody' },
          /the store refused the credentials \(S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY\)/,
        ],
        [{ S3_ENDPOINT: closed }, /nothing accepts connections at the endpoint/],
      ];
      for (const [change, says] of cases) {
        const env = { ...site.env, ...s3.env, ...change };
        const started = await startServer(env).catch((err: Error) => err);
        if (!(started instanceof Error)) {
          started.child.kill('SIGKILL');
          assert.fail(`the server started with ${JSON.stringify(change)}`);
        }
        assert.match(started.message, /server exited with 1/);
        assert.match(started.message, /failed to start: the file store/);
        assert.match(started.message, says);
        const doctor = await fsm(env, 'doctor');
        assert.equal(doctor.code, 1, doctor.stdout);
        assert.match(doctor.stderr, /doctor: files: the file store/);
        assert.match(doctor.stderr, says);
        const files = JSON.parse(doctor.stdout).checks.find((c: { check: string }) => c.check === 'files');
        assert.equal(files.ok, false);
      }
      const good = await fsm({ ...site.env, ...s3.env }, 'doctor');
      assert.equal(good.code, 0, good.stderr);
      assert.match(
        JSON.parse(good.stdout).checks.find((c: { check: string }) => c.check === 'files').message,
        /S3 bucket fsm-test at http:\/\/127\.0\.0\.1:\d+: an object was written and removed/,
      );
      assert.deepEqual(await s3.keys(), [], "doctor's probe object is removed");
      assert.equal(good.stderr, '', 'no warning from the SDK');
    });
  });
}
