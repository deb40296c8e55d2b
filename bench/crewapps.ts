import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../src/db/index.js';
import { loadConfig } from '../src/config.js';
import { createServices } from '../src/services.js';
import { createAccount } from '../src/accounts/service.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { issueToken } from '../src/auth/tokens.js';
import { startProcess } from './server.js';
import { certifyClient, registerClient } from '../src/oauth/clients.js';

/**
 * Live streams under load (issue 32): STREAMS open streams on one account (10 per token) while
 * WRITES_PER_S jobs a second are created for SECONDS; every stream must receive every event.
 * Prints the commit-to-delivery latency (p50, p99: from the write's answer to a stream's receipt)
 * and the server's RSS growth per open stream. Standalone, not part of `npm run bench`:
 * `node dist/bench/crewapps.js` (SQLite) or with DATABASE_URL (PostgreSQL).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const STREAMS = env('STREAMS', 500);
const WRITES_PER_S = env('WRITES_PER_S', 20);
const SECONDS = env('SECONDS', 10);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-bench-streams-'));
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl } as NodeJS.ProcessEnv);
  const database = await connect({ databaseUrl, sqliteFile: path.join(dataDir, 'fsm.sqlite') });
  const services = createServices(config, database);
  const { account, user } = await createAccount(services.writer, {
    companyName: 'Streams',
    firstName: 'Ada',
    lastName: 'Admin',
    mobile: '+441234567890',
    login: `streams-${Date.now()}`,
    password: 'correct horse battery',
  });
  const { clientId } = await registerClient(database, { name: 'Bench', redirectUris: ['https://bench.example/cb'] });
  await certifyClient(database, clientId);
  const tokens: string[] = [];
  for (let i = 0; i < Math.ceil(STREAMS / 10); i++)
    tokens.push(
      (
        await issueToken(
          database.db,
          'access',
          { clientId, userId: user.id, accountId: account.id, permissions: [...ALL_PERMISSIONS] },
          Date.now(),
        )
      ).token,
    );
  await services.blobs.close();
  await database.close();

  const port = await freePort();
  const server = await startProcess(root, 'dist/src/server.js', {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_API: '1000000000',
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const base = server.url;
  try {
    const before = rssMb(server.pid);
    const received: Map<number, number>[] = [];
    await Promise.all(
      Array.from(
        { length: STREAMS },
        (_, i) =>
          new Promise<void>((resolve, reject) => {
            const got = new Map<number, number>();
            received.push(got);
            const req = http.get(
              `${base}/events?where=${encodeURIComponent('collection = "jobs"')}`,
              {
                agent,
                headers: {
                  authorization: `Bearer ${tokens[Math.floor(i / 10)]}`,
                  'x-version': '1.0',
                  accept: 'text/event-stream',
                },
              },
              (res) => {
                if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`));
                let buf = '';
                res.setEncoding('utf8');
                res.on('data', (d: string) => {
                  buf += d;
                  let end: number;
                  while ((end = buf.indexOf('\n\n')) >= 0) {
                    const frame = buf.slice(0, end);
                    buf = buf.slice(end + 2);
                    const data = /^data: (.*)$/m.exec(frame);
                    if (data) got.set((JSON.parse(data[1]) as { item: { id: number } }).item.id, Date.now());
                  }
                });
                resolve();
              },
            );
            req.on('error', reject);
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 1000));
    const opened = rssMb(server.pid);
    const answered = new Map<number, number>();
    const total = WRITES_PER_S * SECONDS;
    const started = Date.now();
    const writes: Promise<void>[] = [];
    for (let n = 0; n < total; n++) {
      const due = started + (n * 1000) / WRITES_PER_S;
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      writes.push(
        fetch(`${base}/jobs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens[0]}`, 'x-version': '1.0', 'content-type': 'application/json' },
          body: JSON.stringify({ jobs: [{ title: `Job ${n}` }] }),
        }).then(async (res) => {
          const body = (await res.json()) as { jobs: { id: number }[] };
          answered.set(body.jobs[0].id, Date.now());
        }),
      );
    }
    await Promise.all(writes);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && received.some((g) => g.size < total)) await new Promise((r) => setTimeout(r, 100));
    const latencies: number[] = [];
    for (const got of received) for (const [id, at] of answered) latencies.push((got.get(id) ?? Infinity) - at);
    const complete = received.filter((g) => [...answered.keys()].every((id) => g.has(id))).length;
    const out = {
      dialect: databaseUrl ? 'postgres' : 'sqlite',
      streams: STREAMS,
      writesPerSecond: WRITES_PER_S,
      events: total,
      streamsWithEveryEvent: complete,
      latencyMsP50: pct(latencies, 0.5),
      latencyMsP99: pct(latencies, 0.99),
      rssMbBefore: Math.round(before),
      rssMbWithStreams: Math.round(opened),
      rssKbPerStream: Math.round(((opened - before) * 1024) / STREAMS),
    };
    console.log(JSON.stringify(out));
  } finally {
    agent.destroy();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
