import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DIALECTS, appWithTenants, call, skipUnless, type Tenant, type TestApp } from '../../../test/helpers.js';
import { startS3, type TestS3 } from '../../../test/s3.js';

/**
 * Uploads that never finish (issue 25): a multipart body that stops inside its file part, a client
 * that goes away mid-part, a body that trickles in or stalls. Each ends in a 4xx or a closed
 * connection within a bounded time, with no open file, no staging file and no item left, on both
 * stores. Raw sockets against a listening server: these are what app.inject cannot produce.
 */
const STORES = ['local', 's3'] as const;
const BOUNDARY = 'fsm-unfinished';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds or `ms` passed; returns whether it held. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 5000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50)) if (await check()) return true;
  return check();
}

/** One request over a raw socket: the head is written now, the body by the caller. */
function open(port: number, head: string) {
  const socket = net.connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (d) => (answer += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head);
  return { socket, closed, answer: () => answer };
}

const filePart = (name = 'a.bin') =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );

for (const dialect of DIALECTS)
  for (const store of STORES) {
    describe(`uploads that never finish (${dialect}, ${store} store)`, { skip: skipUnless(dialect) }, () => {
      let t: TestApp;
      let a: Tenant;
      let s3: TestS3 | undefined;
      let port: number;
      before(async () => {
        if (store === 's3') s3 = await startS3();
        ({ t, a } = await appWithTenants(dialect, { env: { ...s3?.env, BODY_TIMEOUT: '1s' } }));
        await t.app.listen({ host: '127.0.0.1', port: 0 });
        port = (t.app.server.address() as net.AddressInfo).port;
      });
      after(async () => {
        await t?.close();
        await s3?.close();
      });

      const head = (length: number, type = `multipart/form-data; boundary=${BOUNDARY}`, url = '/files/upload') =>
        `POST ${url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.token}\r\nX-Version: 1.0\r\n` +
        `Content-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;
      const tmpDir = () => path.join(t.dataDir, 'files', 'tmp');
      /** Files this process holds open under DATA_DIR/files (its descriptors, from /proc). */
      const openFiles = () =>
        fs
          .readdirSync('/proc/self/fd')
          .map((fd) => {
            try {
              return fs.readlinkSync(`/proc/self/fd/${fd}`);
            } catch {
              return '';
            }
          })
          .filter((p) => p.startsWith(path.join(t.dataDir, 'files')));
      /** Nothing staged anywhere: no staging file, no open one, no tmp/ object, no multipart upload. */
      const nothingStaged = async () =>
        (!fs.existsSync(tmpDir()) || fs.readdirSync(tmpDir()).length === 0) &&
        openFiles().length === 0 &&
        (!s3 || ((await s3.keys('tmp/')).length === 0 && (await s3.uploads()).length === 0));
      const count = async () => (await call(t.app, a.token, 'GET', '/files')).body.metadata.recordsCount as number;

      test('a multipart body that ends inside its file part (no closing boundary) is answered 422 at once', async () => {
        const n = await count();
        // Past one 5 MiB part: the S3 store has a multipart upload under way when the body stops.
        const body = Buffer.concat([filePart(), crypto.randomBytes(6 << 20)]);
        const started = Date.now();
        const r = open(port, head(body.length));
        r.socket.write(body);
        assert.ok(await eventually(() => /\r\n\r\n/.test(r.answer())), 'an answer, the connection kept open');
        assert.match(r.answer(), /^HTTP\/1\.1 422 /);
        assert.match(r.answer(), /"code":1336/);
        assert.ok(Date.now() - started < 5000);
        assert.equal(r.socket.destroyed, false, 'the request was whole: the connection may be kept');
        assert.ok(await eventually(nothingStaged), 'no staging, no open file, no pending upload');
        assert.equal(await count(), n);
        r.socket.destroy();
      });

      test('a client that goes away in the middle of the file part leaves nothing', async () => {
        const n = await count();
        const r = open(port, head(20 << 20));
        r.socket.write(Buffer.concat([filePart(), crypto.randomBytes(6 << 20)]));
        // Until the server has started staging: a file under tmp/, or a multipart upload.
        assert.ok(
          await eventually(async () =>
            s3 ? (await s3.uploads()).length > 0 : fs.existsSync(tmpDir()) && fs.readdirSync(tmpDir()).length > 0,
          ),
          'the upload was being staged',
        );
        r.socket.destroy();
        assert.ok(await eventually(nothingStaged), 'staging removed once the client left');
        assert.equal(await count(), n);
      });

      test('a raw body that stalls is answered 408 (code 1408) and its connection closed', async () => {
        const n = await count();
        const started = Date.now();
        const r = open(port, head(100_000, 'application/octet-stream', '/files/upload?name=stall.bin'));
        r.socket.write(crypto.randomBytes(1000));
        await r.closed;
        const took = Date.now() - started;
        assert.match(r.answer(), /^HTTP\/1\.1 408 /);
        assert.match(r.answer(), /"code":1408/);
        assert.ok(took >= 900 && took < 5000, `closed after ${took} ms (BODY_TIMEOUT=1s)`);
        assert.ok(await eventually(nothingStaged));
        assert.equal(await count(), n);
      });

      test('a multipart body that trickles a byte at a time is cut off, not held forever', async () => {
        const r = open(port, head(10_000));
        r.socket.write(filePart());
        const started = Date.now();
        // One byte every 200 ms: never idle for a second, but far under 1 KiB/s.
        const trickle = setInterval(() => r.socket.writable && r.socket.write('x'), 200);
        try {
          await r.closed;
        } finally {
          clearInterval(trickle);
        }
        const took = Date.now() - started;
        assert.match(r.answer(), /^HTTP\/1\.1 408 /);
        assert.ok(took < 5000, `closed after ${took} ms`);
        assert.ok(await eventually(nothingStaged));
      });

      test('a JSON body that stalls is cut off the same way', async () => {
        const r = open(port, head(500, 'application/json', '/jobs'));
        r.socket.write('{"jobs":[{"title":');
        await r.closed;
        assert.match(r.answer(), /^HTTP\/1\.1 408 /);
        // Nothing half-read was taken as a job.
        assert.equal((await call(t.app, a.token, 'GET', '/jobs')).body.metadata.recordsCount, 0);
      });
    });
  }
