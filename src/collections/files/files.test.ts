import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import {
  DIALECTS,
  addUser,
  assertIsolated,
  call,
  appWithTenants,
  errorsOf,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../../test/helpers.js';
import { S3_BUCKET, startS3, type TestS3 } from '../../../test/s3.js';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { sweepOrphans } from './bytes.js';
import { contentDisposition } from '../../http/file-downloads.js';
import { mediaType } from './upload.js';

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** A multipart/form-data body built by hand, so the test controls every byte. */
function multipart(parts: { name: string; value: string | Buffer; filename?: string; type?: string }[]) {
  const boundary = `----fsm${crypto.randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disp = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disp}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`;
    chunks.push(Buffer.from(head), Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The same suite on the local disk (DATA_DIR/files) and on an S3-compatible store (s3rver, test/s3.ts). */
const STORES = ['local', 's3'] as const;

for (const dialect of DIALECTS)
  for (const store of STORES) {
    describe(`files (${dialect}, ${store} store)`, { skip: skipUnless(dialect) }, () => {
      let t: TestApp;
      let a: Tenant;
      let b: Tenant;
      let s3: TestS3 | undefined;
      before(async () => {
        if (store === 's3') s3 = await startS3();
        ({ t, a, b } = await appWithTenants(dialect, { env: s3?.env }));
      });
      after(async () => {
        await t?.close();
        await s3?.close();
      });

      const uploadRaw = (token: string, query: string, body: Buffer, type = 'application/octet-stream') =>
        t.app.inject({
          method: 'POST',
          url: `/files/upload${query}`,
          payload: body,
          headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': type },
        });
      const uploadForm = (token: string, parts: Parameters<typeof multipart>[0]) => {
        const { payload, contentType } = multipart(parts);
        return t.app.inject({
          method: 'POST',
          url: '/files/upload',
          payload,
          headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': contentType },
        });
      };
      /** The download link as an injectable path: no bearer token, no X-Version. */
      const download = (url: string) => t.app.inject({ method: 'GET', url: url.slice(t.config.publicUrl.length) });
      const blobPath = (digest: string) => path.join(t.dataDir, 'files', digest.slice(0, 2), digest.slice(2));
      /** Whether the store holds bytes under a digest (DATA_DIR/files/ab/cdef…, or the object files/<sha256>). */
      const stored = async (digest: string) => (s3 ? s3.stored(digest) : fs.existsSync(blobPath(digest)));
      const storedBytes = async (digest: string) => (s3 ? s3.bytes(digest) : fs.readFileSync(blobPath(digest)));
      /** Nothing staged: no file under DATA_DIR/files/tmp, or no object under tmp/ and no multipart upload pending. */
      const stagingEmpty = async () => {
        if (s3) return (await s3.keys('tmp/')).length === 0 && (await s3.uploads()).length === 0;
        const tmp = path.join(t.dataDir, 'files', 'tmp');
        return !fs.existsSync(tmp) || fs.readdirSync(tmp).length === 0;
      };
      const newJob = async (tenant: Tenant, title = 'Fix the boiler') =>
        (await call(t.app, tenant.token, 'POST', '/jobs', { jobs: [{ title }] })).body.jobs[0].id as number;

      test('raw upload answers like a create, with sha256, size, type, uploader and a signed link', async () => {
        const bytes = crypto.randomBytes(100_000);
        const res = await uploadRaw(a.token, '?name=report.pdf', bytes, 'application/pdf');
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.result, 'success');
        assert.deepEqual(body.metadata, { receivedItemsCount: 1, validItems: [0], invalidItems: [] });
        const [f] = body.files;
        assert.equal(f.name, 'report.pdf');
        assert.equal(f.mimeType, 'application/pdf');
        assert.equal(f.size, bytes.length);
        assert.equal(f.sha256, sha(bytes));
        assert.equal(f.job, null);
        assert.deepEqual(f.user, { id: a.adminId });
        assert.deepEqual(f.account, { id: a.accountId });
        assert.equal(f.deleted, false);
        assert.match(
          f.downloadUrl,
          new RegExp(
            `^${t.config.publicUrl}/file-downloads/${a.accountId}/${f.id}\\?expires=\\d+&signature=[\\w-]{43}$`,
          ),
        );
        assert.ok((await storedBytes(f.sha256)).equals(bytes), 'stored byte for byte under the digest');
        assert.ok(await stagingEmpty());
        const read = await call(t.app, a.token, 'GET', `/files/${f.id}`);
        assert.equal(read.body.files[0].sha256, f.sha256);
      });

      test('multipart upload: part `file`, fields `name` and `job` (in any order)', async () => {
        const jobId = await newJob(a);
        const bytes = Buffer.from('hello, multipart\n');
        const res = await uploadForm(a.token, [
          { name: 'file', value: bytes, filename: 'ignored.txt', type: 'text/plain; charset=utf-8' }, // busboy keeps only type/subtype
          { name: 'name', value: 'notes.txt' },
          { name: 'job', value: String(jobId) },
        ]);
        assert.equal(res.statusCode, 200, res.body);
        const [f] = res.json().files;
        assert.deepEqual(
          [f.name, f.mimeType, f.size, f.sha256, f.job],
          ['notes.txt', 'text/plain', bytes.length, sha(bytes), { id: jobId }],
        );
        // Without a name field, the part's filename is the name.
        const plain = await uploadForm(a.token, [
          { name: 'file', value: 'x', filename: 'photo.jpg', type: 'image/jpeg' },
        ]);
        assert.equal(plain.json().files[0].name, 'photo.jpg');
        const expanded = await call(t.app, a.token, 'GET', `/files/${f.id}?fields=*,[*]`);
        assert.equal(expanded.body.files[0].job.title, 'Fix the boiler');
        assert.equal(expanded.body.files[0].user.firstName, 'Ada');
      });

      test('download serves the exact bytes with type, disposition, length and nosniff, without a token', async () => {
        const bytes = crypto.randomBytes(70_000);
        const name = 'Rapport "final" été/2025.pdf';
        const [f] = (await uploadRaw(a.token, `?name=${encodeURIComponent(name)}`, bytes, 'application/pdf')).json()
          .files;
        const res = await download(f.downloadUrl);
        assert.equal(res.statusCode, 200);
        assert.ok(res.rawPayload.equals(bytes));
        assert.equal(res.headers['content-type'], 'application/pdf');
        assert.equal(res.headers['content-length'], String(bytes.length));
        assert.equal(res.headers['x-content-type-options'], 'nosniff');
        assert.equal(res.headers['content-disposition'], contentDisposition(name));
        assert.match(
          String(res.headers['content-disposition']),
          /^attachment; filename="Rapport _final_ _t_\/2025.pdf"; filename\*=UTF-8''Rapport%20%22final%22%20%C3%A9t%C3%A9%2F2025.pdf$/,
        );
      });

      test('an expired or tampered link is refused with the error envelope', async () => {
        const [f] = (await uploadRaw(a.token, '?name=a.bin', Buffer.from('abc'))).json().files;
        const url = new URL(f.downloadUrl);
        const sig = url.searchParams.get('signature')!;
        const tampered = [
          f.downloadUrl.replace(sig, `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`),
          f.downloadUrl.replace(`/${f.id}?`, `/${f.id + 1}?`),
          f.downloadUrl.replace(`/${a.accountId}/`, `/${b.accountId}/`),
          f.downloadUrl.replace(/expires=(\d+)/, (_m: string, e: string) => `expires=${Number(e) + 3600}`),
          f.downloadUrl.split('&')[0],
        ];
        for (const u of tampered) {
          const res = await download(u);
          assert.equal(res.statusCode, 403, u);
          assert.equal(res.json().error.code, 1022);
          assert.match(String(res.headers['content-type']), /^application\/json/);
        }
        const saved = t.clock.now;
        try {
          t.clock.now += 15 * 60 * 1000 - 2000;
          assert.equal((await download(f.downloadUrl)).statusCode, 200, 'still valid just before 15 minutes');
          t.clock.now += 3000;
          const res = await download(f.downloadUrl);
          assert.equal(res.statusCode, 403);
          assert.deepEqual([res.json().result, res.json().error.code], ['error', 1023]);
        } finally {
          t.clock.now = saved;
        }
      });

      test('over the limit: 413 for raw and multipart bodies, and nothing is kept', async () => {
        const saved = t.config.filesMaxBytes;
        t.config.filesMaxBytes = 1000;
        try {
          const count = async () => (await call(t.app, a.token, 'GET', '/files')).body.metadata.recordsCount;
          const n = await count();
          const big = crypto.randomBytes(1001);
          const raw = await uploadRaw(a.token, '?name=big.bin', big);
          assert.equal(raw.statusCode, 413);
          assert.equal(raw.json().error.code, 1062);
          // No Content-Length (a streamed body): the byte counter stops it mid-stream.
          const chunked = await t.app.inject({
            method: 'POST',
            url: '/files/upload?name=big.bin',
            payload: Readable.from([big.subarray(0, 600), big.subarray(600)]),
            headers: {
              authorization: `Bearer ${a.token}`,
              'x-version': '1.0',
              'content-type': 'application/octet-stream',
            },
          });
          assert.equal(chunked.statusCode, 413, chunked.body);
          assert.equal(chunked.headers.connection, 'close', 'the rest of the body is not read');
          const form = await uploadForm(a.token, [
            { name: 'name', value: 'big.bin' },
            { name: 'file', value: big, filename: 'big.bin' },
          ]);
          assert.equal(form.statusCode, 413, form.body);
          assert.equal(form.json().error.code, 1062);
          assert.equal(await count(), n);
          assert.ok(await stagingEmpty());
          assert.ok(!(await stored(sha(big))));
          const exact = await uploadRaw(a.token, '?name=edge.bin', crypto.randomBytes(1000));
          assert.equal(exact.statusCode, 200, 'exactly the limit is accepted');
        } finally {
          t.config.filesMaxBytes = saved;
        }
      });

      test('identical content is stored once; DELETE removes the bytes only when nothing references them', async () => {
        const bytes = crypto.randomBytes(5000);
        const one = (await uploadRaw(a.token, '?name=one.bin', bytes)).json().files[0];
        const two = (await uploadRaw(b.token, '?name=two.bin', bytes)).json().files[0];
        assert.equal(one.sha256, two.sha256);
        const del = await call(t.app, a.token, 'DELETE', '/files', { files: [{ id: one.id }] });
        assert.equal(del.status, 200, del.raw);
        assert.deepEqual(del.body.files, [{ id: one.id }]);
        assert.ok(await stored(one.sha256), "still used by the other account's file");
        assert.equal((await download(one.downloadUrl)).statusCode, 404, 'a genuine link to a deleted file');
        assert.equal((await download(two.downloadUrl)).statusCode, 200);
        assert.equal((await call(t.app, b.token, 'DELETE', `/files/${two.id}`)).status, 200);
        assert.ok(!(await stored(one.sha256)), 'last reference gone: bytes gone');
      });

      test('PATCH renames and re-attaches; server-set members stay read-only', async () => {
        const jobId = await newJob(a, 'Other job');
        const [f] = (await uploadRaw(a.token, '?name=old.txt', Buffer.from('text'), 'text/plain')).json().files;
        const renamed = await call(t.app, a.token, 'PATCH', '/files', {
          files: [{ id: f.id, name: 'new.txt', job: { id: jobId } }],
        });
        assert.equal(renamed.status, 200, renamed.raw);
        assert.deepEqual([renamed.body.files[0].name, renamed.body.files[0].job], ['new.txt', { id: jobId }]);
        assert.match(
          String((await download(renamed.body.files[0].downloadUrl)).headers['content-disposition']),
          /new\.txt/,
        );
        const detached = await call(t.app, a.token, 'PATCH', `/files/${f.id}`, { files: [{ job: null }] });
        assert.equal(detached.body.files[0].job, null);
        const bad = await call(t.app, a.token, 'PATCH', '/files', {
          files: [{ id: f.id, sha256: '0'.repeat(64), size: 1, user: { id: a.adminId }, downloadUrl: 'x' }],
        });
        assert.equal(bad.status, 422);
        assert.deepEqual(errorsOf(bad), ['1042:sha256', '1042:size', '1042:user', '1042:downloadUrl']);
        const otherJob = await newJob(b);
        const foreign = await call(t.app, a.token, 'PATCH', '/files', { files: [{ id: f.id, job: { id: otherJob } }] });
        assert.deepEqual(errorsOf(foreign), ['1045:job'], "another account's job is not found");
      });

      test('another account cannot read, change or delete a file by id', async () => {
        const [f] = (await uploadRaw(b.token, '?name=secret.txt', Buffer.from('secret'))).json().files;
        await assertIsolated(t, a, b, 'files', f.id, { name: 'stolen.txt' });
      });

      test('upload validation goes through the write path: nothing kept on failure', async () => {
        const noName = await uploadRaw(a.token, '', Buffer.from('nameless'));
        assert.equal(noName.statusCode, 422);
        assert.deepEqual(errorsOf({ body: noName.json() }), ['1040:name']);
        const badJob = await uploadRaw(a.token, '?name=x.txt&job=999999', Buffer.from('orphan'));
        assert.deepEqual(errorsOf({ body: badJob.json() }), ['1045:job']);
        assert.ok(await stagingEmpty());
        assert.ok(!(await stored(sha(Buffer.from('orphan')))));
        assert.equal((await uploadRaw(a.token, '?name=x&bogus=1', Buffer.from('x'))).statusCode, 400);
        const noFile = await uploadForm(a.token, [{ name: 'name', value: 'x' }]);
        assert.equal(noFile.json().error.code, 1336);
      });

      test('POST /files is refused (405): files are created by the upload action only', async () => {
        const res = await call(t.app, a.token, 'POST', '/files', { files: [{ name: 'x' }] });
        assert.equal(res.status, 405);
        assert.equal(res.headers.allow, 'GET, PATCH, DELETE');
        assert.equal((await call(t.app, a.token, 'POST', '/files/1/upload')).status, 404);
        const json = await call(t.app, a.token, 'POST', '/files/upload?name=a.json', { files: [] });
        assert.equal(json.status, 415, 'JSON bodies are parsed by the API; send JSON files as multipart');
      });

      test('binary content of several parts round-trips byte for byte, raw and multipart', async () => {
        // Over two of the S3 store's 5 MiB parts: a multipart upload there, and every byte value.
        const bytes = Buffer.concat([
          Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
          crypto.randomBytes(11 << 20),
        ]);
        const raw = await uploadRaw(a.token, '?name=big.bin', bytes);
        assert.equal(raw.statusCode, 200, raw.body);
        const form = await uploadForm(a.token, [{ name: 'file', value: bytes, filename: 'big.bin' }]);
        assert.equal(form.statusCode, 200, form.body);
        for (const f of [raw.json().files[0], form.json().files[0]]) {
          assert.deepEqual([f.size, f.sha256], [bytes.length, sha(bytes)]);
          const kept = await storedBytes(f.sha256);
          assert.equal(kept.length, bytes.length, 'no framing (aws-chunked) stored with the bytes');
          assert.ok(kept.equals(bytes));
          const res = await download(f.downloadUrl);
          assert.equal(res.statusCode, 200);
          assert.ok(res.rawPayload.equals(bytes));
        }
        // And an empty file.
        const empty = await uploadRaw(a.token, '?name=empty.txt', Buffer.alloc(0), 'text/plain');
        assert.equal(empty.statusCode, 200, empty.body);
        assert.deepEqual([empty.json().files[0].size, empty.json().files[0].sha256], [0, sha(Buffer.alloc(0))]);
        const none = await download(empty.json().files[0].downloadUrl);
        assert.deepEqual([none.statusCode, none.rawPayload.length], [200, 0]);
        assert.ok(await stagingEmpty());
      });

      test('a transaction that fails after the bytes were published keeps no bytes', async () => {
        // A fault after the files row and its bytes are in place: the event of the create is refused
        // (on PostgreSQL events are written inside COMMIT, so COMMIT itself fails).
        const db = t.database.db;
        const on = dialect === 'postgres' ? sql.raw(' on events') : sql.raw('');
        const refuse = async () => {
          if (dialect === 'sqlite')
            return void (await sql`create trigger fsm_test_refuse before insert on events when new.collection = 'files'
            begin select raise(abort, 'refused by the test'); end`.execute(db));
          await sql`create or replace function fsm_test_refuse() returns trigger language plpgsql as $$
          begin if new.collection = 'files' then raise exception 'refused by the test'; end if; return new; end $$`.execute(
            db,
          );
          await sql`create trigger fsm_test_refuse before insert on events for each row execute function fsm_test_refuse()`.execute(
            db,
          );
        };
        const allow = () => sql`drop trigger if exists fsm_test_refuse${on}`.execute(db);
        const kept = crypto.randomBytes(5000);
        assert.equal((await uploadRaw(a.token, '?name=kept.bin', kept)).statusCode, 200);
        await refuse();
        try {
          const before = (await call(t.app, a.token, 'GET', '/files')).body.metadata.recordsCount;
          const bytes = crypto.randomBytes(20_000);
          const res = await uploadRaw(a.token, '?name=doomed.bin', bytes);
          assert.equal(res.statusCode, 500, res.body);
          assert.doesNotMatch(res.body, /refused by the test/);
          assert.equal((await call(t.app, a.token, 'GET', '/files')).body.metadata.recordsCount, before);
          assert.ok(!(await stored(sha(bytes))), 'the bytes published inside the failed transaction are removed');
          assert.ok(await stagingEmpty());
          // Bytes another row uses stay: the same content as an earlier upload, refused, removes nothing.
          assert.equal((await uploadRaw(a.token, '?name=again.bin', kept)).statusCode, 500);
          assert.ok(await stored(sha(kept)), 'still referenced by the first upload');
        } finally {
          await allow();
        }
      });

      test('the housekeeping removes staging and bytes left behind once they are old, and nothing in use', async () => {
        const blobs = t.app.services.blobs;
        const referenced = (await uploadRaw(a.token, '?name=used.bin', crypto.randomBytes(3000))).json().files[0];
        // Bytes published by a process killed before its commit: an object with no row.
        const orphan = (await uploadRaw(a.token, '?name=orphan.bin', crypto.randomBytes(3000))).json().files[0];
        await t.database.db.deleteFrom('files').where('id', '=', orphan.id).execute();
        // Staging of an upload that never ended, on another host sharing the store.
        if (s3) await s3.client.send(new PutObjectCommand({ Bucket: S3_BUCKET, Key: 'tmp/abandoned', Body: 'x' }));
        else fs.writeFileSync(path.join(t.dataDir, 'files', 'tmp', `elsewhere~1~000000000000~${'0'.repeat(24)}`), 'x');

        const hourAgo = Date.now() - 3600_000;
        assert.equal(await blobs.sweep(hourAgo), 0, 'recent staging may belong to an upload in progress');
        assert.equal(await sweepOrphans(t.database, blobs, hourAgo, Date.now()), 0);
        assert.ok(await stored(orphan.sha256));
        assert.ok(!(await stagingEmpty()));

        // As an hour later: both are old enough.
        const later = Date.now() + 1000;
        assert.equal(await blobs.sweep(later), 1);
        assert.ok(await stagingEmpty());
        assert.equal(await sweepOrphans(t.database, blobs, later, Date.now()), 1);
        assert.ok(!(await stored(orphan.sha256)), 'no row references it: removed');
        assert.ok(await stored(referenced.sha256), 'a row references it: kept');
        assert.equal((await download(referenced.downloadUrl)).statusCode, 200);
      });

      test('roles: Employees upload and manage files; Contractors only on their jobs (test/contractor-files.test.ts)', async () => {
        const employee = await addUser(t, a, 'employee');
        const up = await uploadRaw(employee.token, '?name=e.txt', Buffer.from('e'));
        assert.equal(up.statusCode, 200);
        assert.deepEqual(up.json().files[0].user, { id: employee.id });
        const contractor = await addUser(t, a, 'contractor');
        assert.equal((await uploadRaw(contractor.token, '?name=c.txt', Buffer.from('c'))).statusCode, 422);
        const seen = await call(t.app, contractor.token, 'GET', '/files');
        assert.equal(seen.status, 200);
        assert.deepEqual(seen.body.files, []);
      });
    });
  }

test('media types are cleaned and Content-Disposition is safe for any name', () => {
  assert.equal(mediaType('Image/PNG'), 'image/png');
  assert.equal(mediaType('text/plain;charset=UTF-8'), 'text/plain; charset=utf-8');
  assert.equal(mediaType('nonsense'), 'application/octet-stream');
  assert.equal(mediaType(undefined), 'application/octet-stream');
  assert.equal(
    contentDisposition('a\r\nb;c=d'),
    'attachment; filename="a__b;c=d"; filename*=UTF-8\'\'a%0D%0Ab%3Bc%3Dd',
  );
});
