// Measures the server's memory while it receives and serves a large file, on both stores, to show
// that uploads and downloads stream (PRODUCT §14: a 100 MiB upload and download adds less than
// 64 MiB to the process's peak RSS, and, with FILES_STORE=s3, nothing to its local disk).
// Usage: npm run build && node scripts/files-memory.mjs [MiB] [local|s3 ...]
// For each store it runs a real server (compiled app, SQLite in a temporary DATA_DIR; for s3 an
// s3rver child process, test/s3.ts) in a child process, uploads the file as a raw body and as
// multipart, downloads it through its link, and reads the server's VmRSS/VmHWM from /proc,
// resetting the peak before each step, with the Node.js flags of `npm start`. Each row's growth is
// over the RSS before that step; the last column is what the server kept under DATA_DIR/files.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = (p) => path.join(root, 'dist', p);

async function serve() {
  const { loadConfig } = await import(dist('src/config.js'));
  const { openServices } = await import(dist('src/services.js'));
  const { buildApp } = await import(dist('src/app.js'));
  const { createAccount } = await import(dist('src/accounts/service.js'));
  const { registerClient, certifyClient } = await import(dist('src/oauth/grants/clients.js'));
  const { issueToken } = await import(dist('src/auth/tokens.js'));
  const config = loadConfig({ ...process.env, PORT: '0', FILES_MAX_BYTES: String(200 * 1024 * 1024) });
  const services = await openServices(config);
  const { account, user } = await createAccount(services.writer, {
    companyName: 'Memory',
    firstName: 'M',
    lastName: 'M',
    mobile: '+441234567890',
    login: 'mem',
    password: 'memory-password',
  });
  const { clientId } = await registerClient(services.database, {
    name: 'mem',
    redirectUris: ['http://127.0.0.1/callback'],
    permissions: ['files.read', 'files.write'],
  });
  await certifyClient(services.database, clientId);
  const { token } = await issueToken(
    services.database.db,
    'access',
    { clientId, userId: user.id, accountId: account.id, permissions: ['files.read', 'files.write'] },
    Date.now(),
  );
  const app = await buildApp({ config, database: services.database });
  await app.services.blobs.check();
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send({ port: app.server.address().port, token });
}

function memory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Resets the kernel's peak-RSS counter (VmHWM) of a process we own, so each step is measured alone. */
function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Bytes under a directory (what the server keeps on its local disk). */
function diskUse(dir) {
  if (!fs.existsSync(dir)) return 0;
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size, 0);
}

function post(port, token, urlPath, contentType, chunks) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: urlPath,
        headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': contentType },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(body) }));
      },
    );
    req.on('error', reject);
    (async () => {
      for (const c of chunks) if (!req.write(c)) await once(req, 'drain');
      req.end();
    })().catch(reject);
  });
}

/** Downloads through the signed link, hashing as it streams (never holding the file). */
function download(port, link) {
  const url = new URL(link);
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: `${url.pathname}${url.search}` }, (res) => {
        const hash = crypto.createHash('sha256');
        res.on('data', (c) => hash.update(c));
        res.on('end', () => resolve({ status: res.statusCode, sha256: hash.digest('hex') }));
      })
      .on('error', reject);
  });
}

/** The Node.js flags `npm start` runs the server with (package.json), so the figures are the server's. */
const START_FLAGS = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((a) => a.startsWith('--'));

async function measure(store, mib, bytes, digest) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-mem-'));
  let s3;
  if (store === 's3') s3 = await (await import(dist('test/s3.js'))).startS3({ timeout: '30s' });
  const child = spawn(process.execPath, [...START_FLAGS, new URL(import.meta.url).pathname, '--serve'], {
    env: { ...process.env, ...(s3?.env ?? {}), DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const results = [];
  try {
    const [{ port, token }] = await once(child, 'message');
    const slices = Array.from({ length: mib * 16 }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
    // Warm up (JIT, first multipart parse, the S3 client) so the figures show the transfer, not start-up.
    const warm = await post(port, token, '/files/upload?name=warm.bin', 'application/octet-stream', [
      crypto.randomBytes(64 << 10),
    ]);
    await download(port, warm.body.files[0].downloadUrl);
    const boundary = 'memtest';
    const form = [
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      ...slices,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ];
    let link;
    const steps = [
      ['upload, raw body', () => post(port, token, '/files/upload?name=big.bin', 'application/octet-stream', slices)],
      [
        'upload, multipart',
        () => post(port, token, '/files/upload', `multipart/form-data; boundary=${boundary}`, form),
      ],
      ['download', () => download(port, link)],
    ];
    for (const [label, run] of steps) {
      const reset = resetPeak(child.pid);
      const before = memory(child.pid);
      const res = await run();
      const after = memory(child.pid);
      if (res.status !== 200) throw new Error(`${store} ${label}: ${res.status} ${JSON.stringify(res.body)}`);
      link ??= res.body.files[0].downloadUrl;
      const sha256 = res.sha256 ?? res.body.files[0].sha256;
      results.push({
        store,
        step: `${label}, ${mib} MiB`,
        sha256Matches: sha256 === digest,
        rssBeforeMiB: +before.rss.toFixed(1),
        peakRssMiB: +after.peak.toFixed(1),
        peakGrowthMiB: reset ? +(after.peak - before.rss).toFixed(1) : undefined,
        localDiskMiB: +(diskUse(path.join(dataDir, 'files')) / 1048576).toFixed(1),
      });
    }
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    await s3?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

async function main() {
  const mib = Number(process.argv[2] ?? 100);
  const stores = process.argv.slice(3).length ? process.argv.slice(3) : ['local', 's3'];
  const bytes = crypto.randomBytes(mib * 1024 * 1024);
  const digest = crypto.createHash('sha256').update(bytes).digest('hex');
  const results = [];
  for (const store of stores) results.push(...(await measure(store, mib, bytes, digest)));
  console.table(results);
}

if (process.argv.includes('--serve')) await serve();
else await main();
