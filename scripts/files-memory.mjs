// Measures the server's memory while it receives a 20 MiB upload, to show uploads stream.
// Usage: npm run build && node scripts/files-memory.mjs [MiB]
// Runs a real server (compiled app, SQLite in a temporary DATA_DIR) in a child process, uploads
// the file as a raw body and as multipart, and reads the child's VmRSS/VmHWM from /proc.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

async function serve() {
  const dist = (p) => path.join(root, 'dist', p);
  const { loadConfig } = await import(dist('src/config.js'));
  const { connect } = await import(dist('src/db/index.js'));
  const { buildApp } = await import(dist('src/app.js'));
  const { createAccount } = await import(dist('src/accounts/service.js'));
  const { issueToken } = await import(dist('src/oauth/tokens.js'));
  const config = loadConfig({ DATA_DIR: process.env.DATA_DIR, PORT: '0', FILES_MAX_BYTES: String(200 * 1024 * 1024) });
  const database = await connect({ sqliteFile: path.join(config.dataDir, 'fsm.sqlite') });
  const { account, user } = await createAccount(database, {
    companyName: 'Memory',
    firstName: 'M',
    lastName: 'M',
    mobile: '+441234567890',
    login: 'mem',
    password: 'memory-password',
  });
  await database.db
    .insertInto('oauth_clients')
    .values({
      client_id: 'mem',
      secret_hash: 'x',
      name: 'mem',
      redirect_uris: '[]',
      permissions: '["files.read","files.write"]',
      allow_permission_choice: 0,
      certified: 1,
      revoked: 0,
      created: Date.now(),
    })
    .execute();
  const { token } = await issueToken(
    database.db,
    'access',
    { clientId: 'mem', userId: user.id, accountId: account.id, permissions: ['files.read', 'files.write'] },
    Date.now(),
  );
  const app = await buildApp({ config, database });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send({ port: app.server.address().port, token });
}

function memory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Resets the kernel's peak-RSS counter (VmHWM) of a process we own, so each upload is measured alone. */
function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
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

async function main() {
  const mib = Number(process.argv[2] ?? 20);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-mem-'));
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, '--serve'], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const [{ port, token }] = await once(child, 'message');
    const bytes = crypto.randomBytes(mib * 1024 * 1024);
    const slices = Array.from({ length: mib * 16 }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
    // Warm up (JIT, first multipart parse) so the figures show the upload, not start-up.
    await post(port, token, '/files/upload?name=warm.bin', 'application/octet-stream', [Buffer.from('warm')]);
    const boundary = 'memtest';
    const form = [
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      ...slices,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ];
    const results = [];
    for (const [label, url, type, chunks] of [
      ['raw body', '/files/upload?name=big.bin', 'application/octet-stream', slices],
      ['multipart', '/files/upload', `multipart/form-data; boundary=${boundary}`, form],
      ['raw body again', '/files/upload?name=big2.bin', 'application/octet-stream', slices],
    ]) {
      const reset = resetPeak(child.pid);
      const before = memory(child.pid);
      const res = await post(port, token, url, type, chunks);
      const after = memory(child.pid);
      if (res.status !== 200) throw new Error(`${label}: ${res.status} ${JSON.stringify(res.body)}`);
      const ok = res.body.files[0].sha256 === crypto.createHash('sha256').update(bytes).digest('hex');
      results.push({
        upload: `${label}, ${mib} MiB`,
        sha256Matches: ok,
        rssBeforeMiB: +before.rss.toFixed(1),
        rssAfterMiB: +after.rss.toFixed(1),
        peakRssMiB: +after.peak.toFixed(1),
        peakGrowthMiB: reset ? +(after.peak - before.rss).toFixed(1) : undefined,
      });
    }
    console.table(results);
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve')) await serve();
else await main();
