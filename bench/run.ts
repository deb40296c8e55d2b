import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataset, employeeRoleOf, issueTokens, workingCopy, type Dataset } from './datasets.js';
import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import { latencyChart, table, targets, type Row, type Target } from './report.js';
import { rng, userItem, type AccountSize } from './seed.js';
import { startProcess, type RunningServer } from './server.js';
import { deliveryStats, drained, startBenchReceiver } from './webhooks.js';
import { DIRECTUS_VERSION, startDirectus } from './peer-directus.js';
import { crewTime } from './crewtime.js';
import { benchForms } from './forms.js';
import { benchCustomers } from './customers.js';
import { PLACES_ROWS, placesWorkloads } from './places.js';
import { benchPlanning } from './planning.js';
import { benchMaintenance } from './maintenance.js';
import { benchReports } from './reports.js';
import { benchCustom } from './custom.js';
import { liveStreams } from './streams.js';
import { benchMoney } from './money.js';
import { benchSolver, SOLVER_TARGETS } from './solver.js';
import { postgresFloor, sqliteFloor } from './floor.js';
import { multiRowInsertCeiling } from './insert-loop.js';

/**
 * `npm run bench`: seeds (or reuses) the data sets, runs our server as `npm start` does and the two
 * ceilings beside it with the same load, and prints one table, the ratios and the targets.
 * SQLite by default; PostgreSQL when DATABASE_URL is set.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const databaseUrl = process.env.DATABASE_URL || undefined;
const dialect = databaseUrl ? 'postgres' : 'sqlite';
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const load: LoadSettings = {
  connections: env('BENCH_CONNECTIONS', 20),
  duration: env('BENCH_DURATION', 6),
  warmup: env('BENCH_WARMUP', 2),
};
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'warn';
/**
 * One token drives thousands of requests a second, far past the per-token limit (600 a minute), so
 * the limits are raised out of reach; every request still pays for being counted, as in production.
 */
/** BENCH_ONLY=W1,W3,ceilings runs only those rows and phases (ceilings, workers, scaling), e.g. to profile them. */
const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;
/** BENCH_PROFILE=1 runs our server under --cpu-prof (profiles in .bench/profiles/, open in Chrome DevTools). */
const runs = (what: string) => !only || only.has(what);
const nodeArgs = [
  ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.join(root, '.bench', 'profiles')}`] : []),
  // BENCH_NODE_ARGS: extra node flags for our server and the floor (diagnosis: heap sizes, GC traces).
  ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean) : []),
];
/** `npm run bench -- --peer directus`: Directus's W1 and W3 beside ours in the same run (bench/peer-directus.ts). */
const peerArg = process.argv.indexOf('--peer');
const peer = peerArg >= 0 ? process.argv[peerArg + 1] : undefined;
if (peer !== undefined && peer !== 'directus') throw new Error(`unknown peer '${peer}' (known: directus)`);
// Webhook receivers of the W4 webhook row listen on 127.0.0.1.
const RATE_LIMITS = { RATE_LIMIT_API: '1000000000', RATE_LIMIT_AUTH: '1000000000', WEBHOOKS_ALLOW_PRIVATE_URLS: '1' };

const account = (users: number, clients: number, jobs: number, visits: number): AccountSize => ({
  users,
  clients,
  jobs,
  visits,
});
// Two accounts of each size, so every query really filters by tenant.
const MAIN = [account(10_000, 1_000, 100_000, 200_000), account(10_000, 1_000, 100_000, 200_000)];
/** The pages of 50 of the first account's users (W1p draws one of them). */
const USER_PAGES = Math.ceil(MAIN[0].users / 50);
const SMALL = [account(1_000, 100, 1_000, 0), account(1_000, 100, 1_000, 0)];
const LARGE = [account(100_000, 1_000, 100_000, 0), account(100_000, 1_000, 100_000, 0)];

const ratio = (a?: Measurement, b?: Measurement, f: (m: Measurement) => number = (m) => m.requestsPerSecond) =>
  a && b ? f(a) / f(b) : undefined;
const items = (m: Measurement) => m.itemsPerSecond ?? 0;
const f2 = (v?: number) => (v === undefined ? 'n/a' : v.toFixed(2));
const log = (m: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}`);
const W1 = '/users?recordsPerPage=50';
const W2 = `/jobs?where=${encodeURIComponent('title ~ "pump"')}&recordsPerPage=50&sort=-id`;
/**
 * Words of the seeded job titles and client names (bench/seed.ts), from common to rare: W2n and
 * Wassocn draw one per request (`~` on a word of 3 letters or more is read through an index).
 */
const TITLE_WORDS = ['pump', 'boiler', 'valve', 'tap', 'drain', 'safety', 'flush', 'radiat', 'pipe', 'shower'];
const CLIENT_WORDS = ['jones', 'smith', 'taylor', 'brown', 'patel', 'khan', 'evans', 'wood', 'hall', 'green'];
const W2N_LABEL = 'W2 GET /jobs?where=title~<word>, no remembered answers';
const WASSOCN_LABEL = 'Wassoc GET /jobs?where=client.name~<word>, no remembered answers';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The node flags of `npm start` (package.json): our server runs here as it runs there. */
const startFlags = (
  JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(/\s+/)
  .filter((a) => a.startsWith('--'));

/** The server's /metrics token here: the bench counts its statements per request. */
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

/** Statements the server has run so far (its statement-time histogram's count), or undefined. */
async function statementsSoFar(url: string): Promise<number | undefined> {
  try {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    if (!res.ok) return undefined;
    const text = await res.text();
    let n = 0;
    for (const m of text.matchAll(/^fsm_db_query_duration_seconds_count\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
    return n;
  } catch {
    return undefined;
  }
}

async function startOurs(copyEnv: Record<string, string | undefined>, workers = 1): Promise<RunningServer> {
  const port = await freePort();
  const server = await startProcess(
    root,
    'dist/src/server.js',
    {
      ...copyEnv,
      HOST: '127.0.0.1',
      PORT: String(port),
      WORKERS: String(workers),
      LOG_LEVEL: logLevel,
      METRICS_TOKEN,
      ...RATE_LIMITS,
    },
    { workers, args: [...startFlags, ...nodeArgs] },
  );
  // With one process, /metrics counts all its statements (with workers, only the one that answers).
  return workers === 1 ? { ...server, statements: () => statementsSoFar(server.url) } : server;
}

const pickN = <T>(r: () => number, xs: T[], n: number): T[] => {
  const out = new Set<T>();
  while (out.size < n) out.add(xs[Math.floor(r() * xs.length)]);
  return [...out];
};

/** Turns of one workload as one measurement: rates and latencies averaged over equal-length turns. */
/** One turn of interleaved measurements: half the row duration, the warm-up in the first round only. */
const turnOf = (load: LoadSettings, round: number): LoadSettings => ({
  ...load,
  duration: Math.max(2, Math.round(load.duration / 2)),
  warmup: round === 0 ? load.warmup : 0,
});

function mergeTurns(ms: Measurement[]): Measurement | undefined {
  if (!ms.length) return undefined;
  const avg = (f: (m: Measurement) => number) => ms.reduce((a, m) => a + f(m), 0) / ms.length;
  const items = ms[0].itemsPerSecond === undefined ? undefined : avg((m) => m.itemsPerSecond!);
  return {
    requestsPerSecond: avg((m) => m.requestsPerSecond),
    itemsPerSecond: items,
    p50: avg((m) => m.p50),
    p99: Math.max(...ms.map((m) => m.p99)),
    mean: avg((m) => m.mean),
    errors: ms.reduce((a, m) => a + m.errors, 0),
    percentiles: ms[0].percentiles.map(([p], i) => [p, avg((m) => m.percentiles[i][1])]),
    cpuUs: ms.every((m) => m.cpuUs !== undefined) ? avg((m) => m.cpuUs!) : undefined,
    statements: ms.every((m) => m.statements !== undefined) ? avg((m) => m.statements!) : undefined,
  };
}

function workloads(ds: Dataset, token: string) {
  const headers = { authorization: `Bearer ${token}`, 'x-version': '1.0' };
  const json = { ...headers, 'content-type': 'application/json' };
  const r = rng(42);
  const accountId = ds.accounts[0].accountId;
  let keys = 0;
  const w: Record<string, Workload> = {
    W1: { headers, path: W1 },
    W2: { headers, path: W2 },
    W2n: {
      headers,
      path: () =>
        `/jobs?where=${encodeURIComponent(`title ~ "${TITLE_WORDS[Math.floor(r() * TITLE_WORDS.length)]}"`)}&recordsPerPage=50&sort=-id`,
    },
    Wassocn: {
      headers,
      path: () =>
        `/jobs?where=${encodeURIComponent(`client.name ~ "${CLIENT_WORDS[Math.floor(r() * CLIENT_WORDS.length)]}"`)}&recordsPerPage=50&sort=-id`,
    },
    ...placesWorkloads(headers),
    W3: { headers, path: () => `/jobs/${ds.jobIds[Math.floor(r() * ds.jobIds.length)]}` },
    // W1 with its page drawn over the whole list: no remembered answer can carry it.
    W1p: { headers, path: () => `${W1}&page=${1 + Math.floor(r() * USER_PAGES)}` },
    // One user by id: a fixed one, and one drawn from the account's users.
    W3u: { headers, path: `/users/${ds.userIds[0]}` },
    W3ur: { headers, path: () => `/users/${ds.userIds[Math.floor(r() * ds.userIds.length)]}` },
    W4: {
      method: 'POST',
      headers: json,
      path: '/users',
      itemsPerRequest: 10,
      body: () => JSON.stringify({ users: Array.from({ length: 10 }, () => userItem(r, accountId)) }),
    },
    // W4 again with a fresh Idempotency-Key on every request: the cost of keeping the answers.
    W4k: {
      method: 'POST',
      headers: json,
      path: '/users',
      itemsPerRequest: 10,
      requestHeaders: () => ({ 'idempotency-key': `bench-${++keys}-${Math.floor(r() * 1e9)}` }),
      body: () => JSON.stringify({ users: Array.from({ length: 10 }, () => userItem(r, accountId)) }),
    },
    W5: {
      method: 'PATCH',
      headers: json,
      path: '/jobs',
      itemsPerRequest: 10,
      // jobIds[0] is left alone: its W3 answer is compared with the floor's after W5 ran.
      body: () =>
        JSON.stringify({
          jobs: pickN(r, ds.jobIds.slice(1), 10).map((id) => ({
            id,
            priority: ['low', 'normal', 'high', 'urgent'][Math.floor(r() * 4)],
            orderNumber: `PO-${Math.floor(r() * 1e6)}`,
          })),
        }),
    },
  };
  return w;
}

/** W6: the refresh-token grant, when the authorization server answers it. */
async function refreshWorkload(base: string, ds: Dataset, refresh: string): Promise<Workload | string> {
  const body = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refresh,
    client_id: ds.clientId,
    client_secret: ds.clientSecret,
  }).toString();
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const res = await fetch(`${base}/oauth2/token`, { method: 'POST', headers, body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('access_token')) return `unavailable (/oauth2/token answered ${res.status})`;
  return { method: 'POST', headers, path: '/oauth2/token', body: () => body };
}

async function capture(base: string, url: string, headers: Record<string, string>) {
  const res = await fetch(`${base}${url}`, { headers });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${body.slice(0, 300)}`);
  return { headers: Object.fromEntries(res.headers), body };
}

async function main() {
  const started = Date.now();
  log(`${dialect}; ${load.connections} connections, ${load.warmup} s warm-up + ${load.duration} s per workload`);
  const rows: Row[] = [];
  const results: Record<string, Measurement | undefined> = {};
  const chart: { label: string; m: Measurement }[] = [];
  const record = (key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string) => {
    results[key] = m;
    rows.push({ label, m, rssMb, note });
    if (m) chart.push({ label, m });
    if (m)
      log(
        `${label}: ${m.requestsPerSecond.toFixed(0)} req/s${m.itemsPerSecond ? ` (${m.itemsPerSecond.toFixed(0)} items/s)` : ''}, p50 ${m.p50} ms, p99 ${m.p99} ms, ${m.errors} errors`,
      );
    else log(`${label}: ${note}`);
  };

  // Rows measured on data sets of their own add their ratio lines and targets to the report here.
  const extra: { ratios: string[]; targets: Target[] } = { ratios: [], targets: [] };
  // The dispatch solver (PRODUCT §15) on the 56 Solomon instances, on a worker thread: no server
  // and no data set (bench/solver.ts). BENCH_ONLY=solver runs it alone.
  if (runs('solver')) {
    const solver = await benchSolver(root, log);
    const text = solver.flatMap((r) => r.lines).join('\n');
    console.log(`\n${text}`);
    const docs = path.join(root, 'docs', 'bench');
    fs.mkdirSync(docs, { recursive: true });
    const file = path.join(docs, `solver-${new Date().toISOString().slice(0, 10)}.txt`);
    fs.writeFileSync(file, `${new Date().toISOString()}\n${text}\n`);
    log(`wrote ${path.relative(root, file)}`);
    if (only && [...only].every((o) => o === 'solver')) return;
    for (const r of solver) {
      const goal = SOLVER_TARGETS[String(r.limit)];
      extra.targets.push({
        name: `solver at ${r.limit} s: instances not all served feasibly`,
        value: r.failures,
        ok: (v) => v === 0,
        want: '0',
      });
      if (goal) {
        extra.targets.push({
          name: `solver at ${r.limit} s: average gap %`,
          value: r.average,
          ok: (v) => v <= goal.average,
          want: `<= ${goal.average}`,
        });
        if (goal.median !== undefined)
          extra.targets.push({
            name: `solver at ${r.limit} s: median gap %`,
            value: r.median,
            ok: (v) => v <= goal.median!,
            want: `<= ${goal.median}`,
          });
      }
    }
  }
  // Custom fields and search (issue 31): a data set of its own (bench/custom.ts).
  if (runs('custom'))
    extra.targets.push(...(await benchCustom({ root, databaseUrl, load, log, record, start: (e) => startOurs(e) })));
  // Money (issue 28): ten accounts of its own (bench/money.ts).
  if (runs('money')) {
    const money = await benchMoney({
      root,
      databaseUrl,
      load,
      log,
      record,
      turnOf,
      mergeTurns,
      start: (e) => startOurs(e),
    });
    extra.ratios.push(...money.ratios);
    extra.targets.push(...money.targets);
  }
  // Our server, 1 worker, on the main data set.
  const main = await dataset(root, 'main', MAIN, databaseUrl, log);
  const copy = await workingCopy(root, main, MAIN, databaseUrl);
  const tokens = await issueTokens(copy, main);
  const w = workloads(main, tokens.access);
  let server = await startOurs(copy.env);
  const w3Fixed = `/jobs/${main.jobIds[0]}`;
  const captured = {
    w1: await capture(server.url, W1, w.W1.headers),
    w3: await capture(server.url, w3Fixed, w.W1.headers),
    w3u: await capture(server.url, `/users/${main.userIds[0]}`, w.W1.headers),
  };
  let peak = 0;
  const bytesFile = path.join(root, '.bench', 'run', 'captured.json');
  // A fresh clone on PostgreSQL has no SQLite working copies in .bench/run yet.
  fs.mkdirSync(path.dirname(bytesFile), { recursive: true });
  fs.writeFileSync(bytesFile, JSON.stringify(captured));
  const ceilingPort = async () => String(await freePort());
  // W1 and W3 take turns with the bytes ceiling (both processes up), as the write costs below do:
  // measured minutes apart, the ceiling alone moved by up to 70 % between runs of one day
  // (30,795–53,160 req/s for W3), and with it the ratios the targets are set on.
  const bytes =
    runs('ceilings') && ['W1', 'W1p', 'W1n', 'W3', 'W3u', 'W3ur', 'W2n', 'Wassocn'].some(runs)
      ? await startProcess(root, 'dist/bench/ceiling.js', {
          CEILING_MODE: 'bytes',
          CEILING_BYTES: bytesFile,
          PORT: await ceilingPort(),
        })
      : undefined;
  const READ_ROUNDS = 3;
  for (const key of ['W1', 'W1p', 'W2', 'W3', 'W3u', 'W3ur', 'W4', 'W5', 'Wnear', 'Wassoc'] as const) {
    if (!runs(key)) continue;
    const label = {
      ...PLACES_ROWS,
      W1: 'W1 GET /users',
      W1p: 'W1 GET /users&page=<any>',
      W2: 'W2 GET /jobs?where=title~pump',
      W3: 'W3 GET /jobs/ID',
      W3u: 'W3 GET /users/ID (one id)',
      W3ur: 'W3 GET /users/ID (any id)',
      W4: 'W4 POST /users (10 items)',
      W5: 'W5 PATCH /jobs (10 items)',
    }[key];
    if (bytes && ['W1', 'W1p', 'W3', 'W3u', 'W3ur'].includes(key)) {
      const ours: Measurement[] = [];
      const ceilings: Measurement[] = [];
      for (let round = 0; round < READ_ROUNDS; round++) {
        const turn = turnOf(load, round);
        ours.push(await measure(server.url, w[key], turn, server));
        ceilings.push(await measure(bytes.url, w[key], turn, bytes));
      }
      const rss = server.peakRss().max;
      peak = Math.max(peak, rss);
      record(key, `${label}, ${READ_ROUNDS} turns`, mergeTurns(ours), rss);
      record(`${key}bytes`, `${key} ceiling: bytes, ${READ_ROUNDS} turns`, mergeTurns(ceilings), bytes.peakRss().max);
      continue;
    }
    const m = await measure(server.url, w[key], load, server);
    const rss = server.peakRss().max;
    peak = Math.max(peak, rss);
    record(key, label, m, rss);
  }
  // W1 with any page again, on a second server of the same data that remembers no answer
  // (REMEMBER_ANSWERS=0): the read path itself, each page read from the database.
  if (bytes && runs('W1n')) {
    const plain = await startOurs({ ...copy.env, REMEMBER_ANSWERS: '0' });
    const ours: Measurement[] = [];
    const ceilings: Measurement[] = [];
    for (let round = 0; round < READ_ROUNDS; round++) {
      const turn = turnOf(load, round);
      ours.push(await measure(plain.url, w.W1p, turn, plain));
      ceilings.push(await measure(bytes.url, w.W1p, turn, bytes));
    }
    record(
      'W1n',
      `W1 GET /users&page=<any>, no remembered answers, ${READ_ROUNDS} turns`,
      mergeTurns(ours),
      plain.peakRss().max,
    );
    record('W1nbytes', `W1n ceiling: bytes, ${READ_ROUNDS} turns`, mergeTurns(ceilings), bytes.peakRss().max);
    await plain.stop();
  }
  // W2 and Wassoc with the word drawn per request, on a server that remembers no answer
  // (issue 51): every `~` read from the database (the trigram indexes of migration 140), in turns
  // with the bytes ceiling of W1.
  if (bytes && (runs('W2n') || runs('Wassocn'))) {
    const plain = await startOurs({ ...copy.env, REMEMBER_ANSWERS: '0' });
    const keys = (['W2n', 'Wassocn'] as const).filter(runs);
    const turns: Record<string, Measurement[]> = { bytes: [], W2n: [], Wassocn: [] };
    for (let round = 0; round < READ_ROUNDS; round++) {
      const turn = turnOf(load, round);
      for (const key of keys) turns[key].push(await measure(plain.url, w[key], turn, plain));
      turns.bytes.push(await measure(bytes.url, w.W1p, turn, bytes));
    }
    const label = { W2n: W2N_LABEL, Wassocn: WASSOCN_LABEL };
    for (const key of keys)
      record(key, `${label[key]}, ${READ_ROUNDS} turns`, mergeTurns(turns[key]), plain.peakRss().max);
    record('W2nbytes', `W2n ceiling: bytes, ${READ_ROUNDS} turns`, mergeTurns(turns.bytes), bytes.peakRss().max);
    await plain.stop();
  }
  await bytes?.stop();
  // What keys and webhooks cost a write, measured interleaved: W4, W4 with an Idempotency-Key on
  // every request, and W4 with one webhook subscribed to `*` take turns in short rounds on the same
  // server, so the machine's drift and the database's growth fall on all three alike (single
  // back-to-back rows of the same build differed by 15–30 %). The webhook is paused (no
  // deliveries queued) except in its own turns. Then how fast the worker delivers the backlog.
  let webhookNote = 'skipped';
  if (runs('W4k') || runs('W4hook')) {
    const rx = await startBenchReceiver();
    const api = (method: string, url: string, body: unknown) =>
      fetch(`${server.url}${url}`, { method, headers: w.W4.headers, body: JSON.stringify(body) });
    const made = await api('POST', '/webhooks', { webhooks: [{ url: rx.url, events: ['*'], active: false }] });
    const hook = (await made.json()) as { webhooks?: { id: number }[] };
    if (made.status !== 200 || !hook.webhooks) throw new Error(`webhook not created: ${made.status}`);
    const hookId = hook.webhooks[0].id;
    const setActive = async (active: boolean) => {
      const res = await api('PATCH', `/webhooks/${hookId}`, { webhooks: [{ id: hookId, active }] });
      if (res.status !== 200) throw new Error(`webhook not ${active ? 'resumed' : 'paused'}: ${res.status}`);
    };
    const turns = { W4: [] as Measurement[], W4k: [] as Measurement[], W4hook: [] as Measurement[] };
    const ROUNDS = 3;
    for (let round = 0; round < ROUNDS; round++) {
      const turn = turnOf(load, round);
      turns.W4.push(await measure(server.url, w.W4, turn, server));
      if (runs('W4k')) turns.W4k.push(await measure(server.url, w.W4k, turn, server));
      if (runs('W4hook')) {
        await setActive(true);
        turns.W4hook.push(await measure(server.url, w.W4, turn, server));
        await setActive(false);
      }
    }
    const rss = server.peakRss().max;
    peak = Math.max(peak, rss);
    record('W4turns', `W4 POST /users, ${ROUNDS} turns`, mergeTurns(turns.W4), rss);
    if (runs('W4k')) record('W4k', `W4 with Idempotency-Key, ${ROUNDS} turns`, mergeTurns(turns.W4k), rss);
    if (runs('W4hook')) {
      record('W4hook', `W4 with a webhook on *, ${ROUNDS} turns`, mergeTurns(turns.W4hook), rss);
      // Its deliveries wait while it is paused: resumed, the worker sends the backlog.
      await setActive(true);
      const done = await drained(rx.arrivals);
      const stats = deliveryStats(rx.arrivals);
      webhookNote = stats
        ? `${stats.count} deliveries, ${stats.perSecond.toFixed(0)}/s; lag commit -> arrival p50 ${stats.lagP50} ms, p99 ${stats.lagP99} ms${done ? '' : ' (not drained in 180 s)'}`
        : 'no deliveries';
      log(`webhook deliveries: ${webhookNote}`);
    }
    await fetch(`${server.url}/webhooks/${hookId}`, {
      method: 'DELETE',
      headers: { authorization: w.W4.headers.authorization, 'x-version': '1.0' },
    });
    await rx.close();
  }
  const w6 = runs('W6') ? await refreshWorkload(server.url, main, tokens.refresh) : 'skipped';
  if (w6 === 'skipped') log('W6 skipped');
  else if (typeof w6 === 'string') record('W6', 'W6 refresh-token grant', undefined, undefined, w6);
  else {
    const m = await measure(server.url, w6, load, server);
    record('W6', 'W6 refresh-token grant', m, server.peakRss().max);
    peak = Math.max(peak, server.peakRss().max);
  }
  if (runs('crewtime'))
    await crewTime({
      server,
      headers: w.W4.headers,
      w4: w.W4,
      w5: w.W5,
      userIds: main.userIds,
      jobIds: main.jobIds,
      load,
      turnOf,
      mergeTurns,
      record,
      log,
    });
  // Planning (issue 45): a day's plan, W1 beside its solves, slots against W1 (bench/planning.ts).
  if (runs('planning')) {
    const planning = await benchPlanning({
      server,
      headers: w.W4.headers,
      accountId: main.accounts[0].accountId,
      w1: w.W1,
      load,
      turnOf,
      mergeTurns,
      record,
      log,
    });
    extra.ratios.push(...planning.ratios);
    extra.targets.push(...planning.targets);
  }
  // Maintenance (issue 46): 1,000 agreements and their roll against W4, a service history against W2.
  if (runs('maintenance')) {
    const maintenance = await benchMaintenance({
      server,
      copy,
      headers: w.W4.headers,
      accountId: main.accounts[0].accountId,
      w1: w.W1,
      w2: w.W2,
      w4: w.W4,
      load,
      turnOf,
      mergeTurns,
      record,
      log,
    });
    extra.ratios.push(...maintenance.ratios);
    extra.targets.push(...maintenance.targets);
  }
  // Forms (issue 47): a submission of 50 answers beside W4, and the job report's time and memory.
  if (runs('forms'))
    await benchForms({
      server,
      start: () => startOurs(copy.env),
      headers: w.W4.headers,
      w4: w.W4,
      jobIds: main.jobIds,
      load,
      turnOf,
      mergeTurns,
      record,
      log,
    });
  // Customers (issue 48): 1,000 messages to a local SMTP relay; the share and booking pages beside W3.
  if (runs('customers')) {
    const customers = await benchCustomers({
      server,
      start: (env) => startOurs({ ...copy.env, ...env }),
      headers: w.W4.headers,
      accountId: main.accounts[0].accountId,
      w3: w.W3,
      load,
      turnOf,
      mergeTurns,
      record,
      log,
    });
    extra.ratios.push(...customers.ratios);
    extra.targets.push(...customers.targets);
  }
  // Reports (issue 49): a summary against a bare GROUP BY, the second account's export and import (bench/reports.ts).
  if (runs('reports')) {
    const second = await issueTokens(copy, main, 1);
    const reports = await benchReports({
      root,
      server,
      start: () => startOurs(copy.env),
      copy,
      headers: w.W4.headers,
      exportHeaders: { authorization: `Bearer ${second.access}`, 'x-version': '1.0' },
      accountId: main.accounts[0].accountId,
      exportAccountId: main.accounts[1].accountId,
      w1: w.W1,
      w4: w.W4,
      load,
      turnOf,
      mergeTurns,
      record,
      log,
    });
    extra.ratios.push(...reports.ratios);
    extra.targets.push(...reports.targets);
  }
  // Live streams (issue 32): 500 open streams, W1–W5 beside them, GET /events as a Contractor.
  const streamTargets = runs('streams')
    ? await liveStreams({ server, copy, main, w, load, turnOf, mergeTurns, record, log })
    : [];
  await server.stop();

  // The ceilings, right after, with the same load.
  let sameW3 = false;
  let sameW1Shape = false;
  let sameLeanW3 = false;
  if (runs('ceilings')) {
    let ceiling = await startProcess(
      root,
      'dist/bench/ceiling.js',
      { ...copy.env, ...RATE_LIMITS, CEILING_MODE: 'floor', PORT: await ceilingPort() },
      { args: nodeArgs },
    );
    const floorW1 = await capture(ceiling.url, W1, w.W1.headers);
    const floorW3 = await capture(ceiling.url, w3Fixed, w.W1.headers);
    // The floor's answers only count as a ceiling if they are what we answer (W4 added users since: compare the first page's ids and shape on W3).
    sameW3 = floorW3.body === captured.w3.body;
    record('W1floor', 'W1 ceiling: floor', await measure(ceiling.url, w.W1, load, ceiling), ceiling.peakRss().max);
    record('W3floor', 'W3 ceiling: floor', await measure(ceiling.url, w.W3, load, ceiling), ceiling.peakRss().max);
    await ceiling.stop();
    // One statement per request, authentication in memory: what no correct server reading the database does less than.
    const tokenAccounts = JSON.stringify([
      [createHash('sha256').update(tokens.access).digest('hex'), main.accounts[0].accountId],
    ]);
    const employeeRole = JSON.stringify([
      [main.accounts[0].accountId, await employeeRoleOf(copy, main.accounts[0].accountId)],
    ]);
    ceiling = await startProcess(
      root,
      'dist/bench/ceiling.js',
      {
        ...copy.env,
        CEILING_MODE: 'one-statement',
        CEILING_TOKENS: tokenAccounts,
        CEILING_ROLES: employeeRole,
        PORT: await ceilingPort(),
      },
      { args: nodeArgs },
    );
    const leanW3 = await capture(ceiling.url, w3Fixed, w.W1.headers);
    sameLeanW3 = leanW3.body === captured.w3.body;
    record(
      'W1lean',
      'W1 ceiling: one statement',
      await measure(ceiling.url, w.W1, load, ceiling),
      ceiling.peakRss().max,
    );
    record(
      'W3lean',
      'W3 ceiling: one statement',
      await measure(ceiling.url, w.W3, load, ceiling),
      ceiling.peakRss().max,
    );
    if (runs('W4'))
      record(
        'W4lean',
        'W4 ceiling: one insert',
        await measure(ceiling.url, w.W4, load, ceiling),
        ceiling.peakRss().max,
      );
    await ceiling.stop();
    if (runs('W4') || runs('W5')) {
      // No HTTP: the same 10 user rows by one multi-row insert in one transaction, in this process.
      const floor = copy.env.DATABASE_URL
        ? postgresFloor(copy.env.DATABASE_URL)
        : sqliteFloor(`${copy.env.DATA_DIR}/fsm.sqlite`);
      const account = main.accounts[0].accountId;
      try {
        record(
          'W4multi',
          'W4 ceiling: multi-row insert (no HTTP)',
          await multiRowInsertCeiling(floor, account, await employeeRoleOf(copy, account), load),
          Math.round(process.memoryUsage().rss / 2 ** 20),
        );
      } finally {
        await floor.close();
      }
    }
    sameW1Shape =
      JSON.stringify(Object.keys(JSON.parse(floorW1.body).users[0])) ===
      JSON.stringify(Object.keys(JSON.parse(captured.w1.body).users[0]));
  }

  // The peer, with the same load, on the same kind of database.
  let peerNote = '';
  if (peer === 'directus') {
    try {
      const p = await startDirectus(root, databaseUrl, await freePort(), log);
      try {
        record(
          'W1peer',
          `W1 peer: Directus ${DIRECTUS_VERSION} GET /users?limit=50`,
          await measure(p.server.url, p.w1, load),
          p.server.peakRss().max,
        );
        record(
          'W3peer',
          `W3 peer: Directus ${DIRECTUS_VERSION} GET /items/jobs/ID`,
          await measure(p.server.url, p.w3, load),
          p.server.peakRss().max,
        );
        peerNote =
          `  ours / Directus ${DIRECTUS_VERSION} throughput: W1 ${f2(ratio(results.W1, results.W1peer))}, W3 ${f2(ratio(results.W3, results.W3peer))}` +
          ` (answer bytes, ours / Directus: W1 ${Buffer.byteLength(captured.w1.body)} / ${p.bytes.w1}, W3 ${Buffer.byteLength(captured.w3.body)} / ${p.bytes.w3})`;
      } finally {
        await p.close();
      }
    } catch (err) {
      // A peer that cannot be installed, started or measured is reported under the ratios; ours still print.
      peerNote = `  Directus ${DIRECTUS_VERSION} unavailable: ${(err as Error).message.split('\n')[0].slice(0, 200)}`;
      log(peerNote.trim());
    }
  }

  // Both cores: WORKERS=2 on the same database.
  if (runs('workers')) {
    server = await startOurs(copy.env, 2);
    record('W1x2', 'W1 GET /users, WORKERS=2', await measure(server.url, w.W1, load, server), server.peakRss().total);
    record('W4x2', 'W4 POST /users, WORKERS=2', await measure(server.url, w.W4, load, server), server.peakRss().total);
    await server.stop();
  }
  await copy.drop();

  // Scaling: W1 and W2 with 1,000 and with 100,000 users/jobs per account.
  const scale: Record<string, Measurement> = {};
  for (const [name, sizes] of runs('scaling')
    ? ([
        ['small', SMALL],
        ['large', LARGE],
      ] as const)
    : []) {
    const ds = await dataset(root, name, sizes, databaseUrl, log);
    const c = await workingCopy(root, ds, sizes, databaseUrl);
    const t = await issueTokens(c, ds);
    const sw = workloads(ds, t.access);
    const s = await startOurs(c.env);
    const n = sizes[0].users.toLocaleString('en');
    for (const key of ['W1', 'W2'] as const) {
      const m = await measure(s.url, sw[key], load, s);
      scale[`${key}${name}`] = m;
      record(
        `${key}${name}`,
        `${key} with ${n} users / ${sizes[0].jobs.toLocaleString('en')} jobs`,
        m,
        s.peakRss().max,
      );
      peak = name === 'large' ? Math.max(peak, s.peakRss().max) : peak;
    }
    await s.stop();
    await c.drop();
  }

  const mean = (m: Measurement) => m.mean;
  const ratios = {
    w1Bytes: ratio(results.W1, results.W1bytes),
    w3Bytes: ratio(results.W3, results.W3bytes),
    w1pBytes: ratio(results.W1p, results.W1pbytes),
    w1nBytes: ratio(results.W1n, results.W1nbytes),
    w2nBytes: ratio(results.W2n, results.W2nbytes),
    wassocnBytes: ratio(results.Wassocn, results.W2nbytes),
    w3uBytes: ratio(results.W3u, results.W3ubytes),
    w3urBytes: ratio(results.W3ur, results.W3urbytes),
    w1Floor: ratio(results.W1, results.W1floor),
    w3Floor: ratio(results.W3, results.W3floor),
    w1Lean: ratio(results.W1lean, results.W1bytes),
    w3Lean: ratio(results.W3lean, results.W3bytes),
    w1Scale: ratio(scale.W1large, scale.W1small, mean),
    w2Scale: ratio(scale.W2large, scale.W2small, mean),
    w1Workers: ratio(results.W1x2, results.W1),
    w4Workers: ratio(results.W4x2, results.W4),
    w4Keyed: ratio(results.W4k, results.W4turns),
    w4Hook: ratio(results.W4hook, results.W4turns),
  };
  // The targets of the speed rounds (issues "Speed, round two" and "round three"): ratios to the
  // bytes ceiling and write rates, per dialect.
  const goal =
    dialect === 'sqlite' ? { w1Bytes: 0.25, w3Bytes: 0.4, items: 8000 } : { w1Bytes: 0.15, w3Bytes: 0.25, items: 5000 };
  const atLeast = (name: string, value: number | undefined, want: number) => [
    { name, value, ok: (v: number) => v >= want, want: `>= ${want}` },
  ];
  const cpus = os.cpus();
  const machine = `${cpus.length} x ${cpus[0]?.model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
  const out = [
    `Benchmark on ${dialect}: ${machine}`,
    `load: ${load.connections} connections, ${load.warmup} s warm-up + ${load.duration} s measured per row (autocannon, same machine)`,
    '',
    table(rows),
    '',
    'ratios (same run):',
    `  W1 ours / bytes ceiling  ${f2(ratios.w1Bytes)}    W1 ours / floor ceiling  ${f2(ratios.w1Floor)}`,
    `  W3 ours / bytes ceiling  ${f2(ratios.w3Bytes)}    W3 ours / floor ceiling  ${f2(ratios.w3Floor)}`,
    `  W1 with any page / bytes ceiling ${f2(ratios.w1pBytes)} (no remembered answers: ${f2(ratios.w1nBytes)}); GET /users/ID / bytes ceiling: one id ${f2(ratios.w3uBytes)}, any id ${f2(ratios.w3urBytes)}`,
    `  no remembered answers, the word drawn per request / bytes ceiling (W1's): W2 ${f2(ratios.w2nBytes)}, Wassoc ${f2(ratios.wassocnBytes)}`,
    `  floor answers as we do: W3 body identical ${sameW3 ? 'yes' : 'NO'}, W1 item shape identical ${sameW1Shape ? 'yes' : 'NO'}`,
    `  one statement / bytes ceiling (a server sending one statement of its own per request): W1 ${f2(ratios.w1Lean)}, W3 ${f2(ratios.w3Lean)}; W3 body identical ${sameLeanW3 ? 'yes' : 'NO'}`,
    `  W4 ours / one insert (the least a server storing the items durably does): ${f2(ratio(results.W4, results.W4lean))}; one insert: ${results.W4lean ? results.W4lean.itemsPerSecond!.toFixed(0) : 'n/a'} items/s`,
    `  W4 / multi-row insert (10 rows, one transaction, no HTTP): ${f2(ratio(results.W4, results.W4multi, items))}; W5 / multi-row insert: ${f2(ratio(results.W5, results.W4multi, items))}; multi-row insert: ${results.W4multi ? results.W4multi.itemsPerSecond!.toFixed(0) : 'n/a'} items/s`,
    `  scaling, mean latency 100,000 / 1,000 rows: W1 ${f2(ratios.w1Scale)}, W2 ${f2(ratios.w2Scale)}`,
    `  WORKERS=2 / WORKERS=1 throughput: W1 ${f2(ratios.w1Workers)}, W4 ${f2(ratios.w4Workers)} (autocannon shares the 2 cores)`,
    `  W4 with / without Idempotency-Key throughput (interleaved turns): ${f2(ratios.w4Keyed)}`,
    `  W4 with a webhook on * / W4 without (interleaved turns): ${f2(ratios.w4Hook)}; webhook deliveries: ${webhookNote}`,
    ...(peerNote ? [peerNote] : []),
    ...extra.ratios,
    '',
    'targets:',
    targets([
      { name: 'W1 / floor ceiling', value: ratios.w1Floor, ok: (v) => v >= 0.8, want: '>= 0.8' },
      { name: 'W3 / floor ceiling', value: ratios.w3Floor, ok: (v) => v >= 0.8, want: '>= 0.8' },
      ...atLeast('W1 / bytes ceiling', ratios.w1Bytes, goal.w1Bytes),
      ...atLeast('W1 with any page / bytes ceiling', ratios.w1pBytes, goal.w1Bytes),
      ...atLeast('W3 / bytes ceiling', ratios.w3Bytes, goal.w3Bytes),
      ...atLeast('GET /users/ID (one id) / bytes ceiling', ratios.w3uBytes, goal.w3Bytes),
      ...atLeast('GET /users/ID (any id) / bytes ceiling', ratios.w3urBytes, goal.w3Bytes),
      ...atLeast('W2 any word, no remembered answers / bytes ceiling', ratios.w2nBytes, 0.25),
      ...atLeast('Wassoc any word, no remembered answers / bytes ceiling', ratios.wassocnBytes, 0.25),
      ...atLeast(`W4 items/s on ${dialect}`, results.W4?.itemsPerSecond, goal.items),
      ...atLeast(`W5 items/s on ${dialect}`, results.W5?.itemsPerSecond, goal.items),
      ...atLeast('W4 / multi-row insert (issue 51)', ratio(results.W4, results.W4multi, items), 0.8),
      ...atLeast('W5 / multi-row insert (issue 51)', ratio(results.W5, results.W4multi, items), 0.5),
      ...atLeast('W4 Idempotency-Key cost (with / without)', ratios.w4Keyed, 0.9),
      ...atLeast('W4 webhook cost (with a webhook on * / without)', ratios.w4Hook, 0.85),
      { name: 'W1 scaling 100k/1k', value: ratios.w1Scale, ok: (v) => v <= 1.5, want: '<= 1.5' },
      { name: 'W2 scaling 100k/1k', value: ratios.w2Scale, ok: (v) => v <= 3, want: '<= 3' },
      ...extra.targets,
      { name: 'peak RSS MB (one process)', value: peak, ok: (v) => v <= 150, want: '<= 150' },
      ...streamTargets,
    ]),
    '',
    `total ${((Date.now() - started) / 1000).toFixed(0)} s`,
  ].join('\n');
  console.log(`\n${out}`);

  const docs = path.join(root, 'docs', 'bench');
  fs.mkdirSync(docs, { recursive: true });
  fs.writeFileSync(
    path.join(docs, `latency-${dialect}.svg`),
    latencyChart(`Latency distribution, ${dialect} (${load.connections} connections)`, chart),
  );
  fs.writeFileSync(path.join(docs, `results-${dialect}.txt`), `${new Date().toISOString()}\n${out}\n`);
  log(`wrote docs/bench/latency-${dialect}.svg and docs/bench/results-${dialect}.txt`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
