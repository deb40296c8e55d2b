import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { Readable } from 'node:stream';
import {
  DIALECTS,
  appWithTenants,
  call,
  createTestApp,
  createTenant,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../../test/helpers.js';
import { startS3, type TestS3 } from '../../../test/s3.js';
import { retryDeletions } from './bytes.js';

/**
 * FILES_STORE=s3 with the store down or slow (PRODUCT §14): uploads and downloads answer 503
 * (`type` server, `Retry-After`) in words that name no bucket, host or S3 error; an upload leaves no
 * item and nothing half-written in the store, multipart uploads included; a DELETE removes the item
 * at once and its bytes once the store is back (file_deletions). The store is a real s3rver in a
 * child process, SIGKILLed and started again on the same port and directory.
 */
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** What a client must never see of the store. */
function assertNothingOfTheStore(text: string) {
  for (const word of [/fsm-test/i, /127\.0\.0\.1/, /<\?xml/i, /s3/i, /bucket/i, /ECONN/])
    assert.doesNotMatch(text, word, `the answer shows the store's own words: ${text}`);
}

function assertUnavailable(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  assert.equal(res.statusCode, 503, res.body);
  const body = JSON.parse(res.body);
  assert.deepEqual([body.result, body.error.type, body.error.code], ['error', 'server', 1503]);
  assert.ok(Number(res.headers['retry-after']) > 0, 'Retry-After');
  assertNothingOfTheStore(res.body);
}

for (const dialect of DIALECTS) {
  describe(`an S3 store that is down (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let s3: TestS3;
    before(async () => {
      s3 = await startS3({ timeout: '2s' });
      ({ t, a } = await appWithTenants(dialect, { env: s3.env }));
    });
    after(async () => {
      await t?.close();
      await s3?.close();
    });

    const upload = (name: string, payload: Buffer | Readable) =>
      t.app.inject({
        method: 'POST',
        url: `/files/upload?name=${name}`,
        payload,
        headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0', 'content-type': 'application/octet-stream' },
      });
    const download = (url: string) => t.app.inject({ method: 'GET', url: url.slice(t.config.publicUrl.length) });
    const count = async () => (await call(t.app, a.token, 'GET', '/files')).body.metadata.recordsCount as number;
    const nothingStaged = async () => (await s3.keys('tmp/')).length === 0 && (await s3.uploads()).length === 0;

    test('an upload answers 503 while the store is down, keeps no item, and works once it is back', async () => {
      const n = await count();
      await s3.kill();
      try {
        const bytes = crypto.randomBytes(50_000);
        assertUnavailable(await upload('down.bin', bytes));
        assert.equal(await count(), n, 'no item');
      } finally {
        await s3.start();
      }
      assert.ok(await nothingStaged());
      assert.deepEqual(await s3.keys('files/'), []);
      const bytes = crypto.randomBytes(50_000);
      const res = await upload('back.bin', bytes);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok((await s3.bytes(sha(bytes))).equals(bytes));
    });

    test('the store killed in the middle of a multipart upload: 503, no item, no object, the upload aborted once it is back', async () => {
      const n = await count();
      const objects = await s3.keys();
      let killed!: () => void;
      const storeGone = new Promise<void>((resolve) => (killed = resolve));
      // Two parts' worth: the first part reaches the store, then the store dies under the second.
      const body = Readable.from(
        (async function* () {
          yield crypto.randomBytes(6 << 20);
          await storeGone;
          yield crypto.randomBytes(6 << 20);
        })(),
      );
      const answer = upload('half.bin', body);
      for (let i = 0; i < 100 && (await s3.uploads()).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal((await s3.uploads()).length, 1, 'a multipart upload under way');
      await s3.kill();
      killed();
      const res = await answer;
      assertUnavailable(res);
      assert.equal(res.headers.connection, 'close', 'the rest of the body is not read');
      assert.equal(await count(), n);
      await s3.start();
      // The abort the store could not take is retried (the housekeeping does this every 10 s).
      await t.app.services.blobs.sweep();
      assert.deepEqual(await s3.uploads(), [], 'no multipart upload left');
      assert.deepEqual(await s3.keys(), objects, 'no object left');
    });

    test('a download answers 503 while the store is down, and the bytes once it is back', async () => {
      const bytes = crypto.randomBytes(30_000);
      const [f] = (await upload('read.bin', bytes)).json().files;
      await s3.kill();
      try {
        assertUnavailable(await download(f.downloadUrl));
      } finally {
        await s3.start();
      }
      const res = await download(f.downloadUrl);
      assert.equal(res.statusCode, 200);
      assert.ok(res.rawPayload.equals(bytes));
    });

    test('a DELETE while the store is down removes the item, and the bytes once the store is back', async () => {
      const gone = crypto.randomBytes(10_000);
      const kept = crypto.randomBytes(10_000);
      const [f] = (await upload('gone.bin', gone)).json().files;
      const [k] = (await upload('kept.bin', kept)).json().files;
      await s3.kill();
      try {
        const del = await call(t.app, a.token, 'DELETE', '/files', { files: [{ id: f.id }, { id: k.id }] });
        assert.equal(del.status, 200, del.raw);
        assert.equal((await call(t.app, a.token, 'GET', `/files/${f.id}`)).status, 404);
      } finally {
        await s3.start();
      }
      const pending = async () =>
        (await t.database.db.selectFrom('file_deletions').select('sha256').orderBy('sha256').execute()).map(
          (r) => r.sha256,
        );
      assert.deepEqual(await pending(), [sha(gone), sha(kept)].sort(), 'recorded for later');
      assert.ok(await s3.stored(sha(gone)), 'the store was down: the bytes are still there');
      // Meanwhile the same content as one of them is uploaded again: those bytes are used once more.
      assert.equal((await upload('again.bin', kept)).statusCode, 200);
      await retryDeletions(t.database, t.app.services.blobs, Date.now());
      assert.equal(await s3.stored(sha(gone)), false, 'removed once the store is back');
      assert.equal(await s3.stored(sha(kept)), true, 'a row uses them again: kept');
      assert.deepEqual(await pending(), []);
    });
  });

  describe(`an S3 store that answers too slowly (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let silent: net.Server;
    const sockets = new Set<net.Socket>();
    before(async () => {
      // Accepts connections and never answers.
      silent = net.createServer((s) => {
        sockets.add(s);
        s.on('error', () => {});
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as net.AddressInfo;
      t = await createTestApp(dialect, {
        env: {
          FILES_STORE: 's3',
          S3_ENDPOINT: `http://127.0.0.1:${port}`,
          S3_BUCKET: 'fsm-test',
          S3_ACCESS_KEY_ID: 'S3RVER',
          S3_SECRET_ACCESS_KEY: 'S3RVER',
          S3_FORCE_PATH_STYLE: '1',
          S3_TIMEOUT: '1s',
        },
      });
      a = await createTenant(t);
    });
    after(async () => {
      await t?.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent?.close(resolve));
    });

    test('an upload is answered 503 within its timeout, not held', async () => {
      const started = Date.now();
      const res = await t.app.inject({
        method: 'POST',
        url: '/files/upload?name=slow.bin',
        payload: crypto.randomBytes(20_000),
        headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0', 'content-type': 'application/octet-stream' },
      });
      const took = Date.now() - started;
      assertUnavailable(res);
      // S3_TIMEOUT=1s, two attempts.
      assert.ok(took < 6000, `answered after ${took} ms`);
      assert.equal((await call(t.app, a.token, 'GET', '/files')).body.metadata.recordsCount, 0);
    });
  });
}
