import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { dataset, issueTokens, workingCopy } from './datasets.js';
import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import { rng, userItem, type AccountSize } from './seed.js';
import { startProcess, type RunningServer } from './server.js';
import type { Target } from './report.js';

/**
 * Custom fields and search (issue 31, PRODUCT §12), on a data set of its own: 100,000 jobs per
 * account (two accounts), each with two custom fields (`extId`, a unique text: an integrator's id;
 * `floor`, a number). Rows, measured on one server in one run so their ratios hold:
 * - W1 (GET /users, 50 a page), the reference;
 * - Wq: GET /jobs?q=<two words>&recordsPerPage=50 (ranked, no sort);
 * - Wcf: GET /jobs?where=customFields.extId = "<one of them>";
 * - W4 and W4cf: POST /users of 10 items, without and with two custom fields each (one unique), in
 *   alternating turns; the search index is maintained in both.
 * The index sizes are logged.
 */
const SIZE: AccountSize = { users: 1_000, clients: 100, jobs: 100_000, visits: 0 };
const SIZES = [SIZE, SIZE];

export interface CustomBenchDeps {
  root: string;
  databaseUrl: string | undefined;
  load: LoadSettings;
  log: (m: string) => void;
  record: (key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string) => void;
  start: (env: Record<string, string | undefined>) => Promise<RunningServer>;
}

export async function benchCustom(d: CustomBenchDeps): Promise<Target[]> {
  const { root, databaseUrl, load, log, record } = d;
  const ds = await dataset(root, 'custom', SIZES, databaseUrl, log);
  const copy = await workingCopy(root, ds, SIZES, databaseUrl);
  const tokens = await issueTokens(copy, ds);
  const headers = { authorization: `Bearer ${tokens.access}`, 'x-version': '1.0' };
  const json = { ...headers, 'content-type': 'application/json' };
  let server = await d.start(copy.env);
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };
  // Both accounts' definitions; the first through the API, the second's values only matter to its rows.
  await post('/customFieldDefinitions', {
    customFieldDefinitions: [
      { collection: 'jobs', key: 'extId', label: 'Their id', type: 'text', unique: true },
      { collection: 'jobs', key: 'floor', label: 'Floor', type: 'number' },
      { collection: 'users', key: 'staffRef', label: 'Staff ref', type: 'text', unique: true },
      { collection: 'users', key: 'badge', label: 'Badge', type: 'number' },
    ],
  });
  await server.stop();

  // Every job's two values, and the unique values' index, written directly (as a migration would).
  const database = copy.open();
  const db = database.db;
  const pg = database.dialect.name === 'postgres';
  const started = Date.now();
  await sql`update jobs set custom_fields = ${pg ? sql`jsonb_build_object('extId', 'EXT-' || id, 'floor', id % 10)` : sql`json_object('extId', 'EXT-' || id, 'floor', id % 10)`}`.execute(
    db,
  );
  await sql`insert into custom_unique_values (account_id, collection, key, value, item_id)
    select account_id, 'jobs', 'extId', '"EXT-' || id || '"', id from jobs where account_id = ${ds.accounts[0].accountId}`.execute(
    db,
  );
  if (pg) await sql`analyze`.execute(db);
  log(`custom: two custom fields on every job in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const sizes = pg
    ? await sql<{ name: string; bytes: number }>`select c.relname as name, pg_relation_size(c.oid)::int8 as bytes
        from pg_class c where c.relname in ('jobs', 'jobs_search', 'jobs_custom_fields', 'custom_unique_values_pkey', 'custom_unique_values_item')`.execute(
        db,
      )
    : await sql<{ name: string; bytes: number }>`select name, sum(pgsize) as bytes from dbstat
        where name in ('jobs', 'custom_unique_values') or name like 'jobs\\_search%' escape '\\'
           or name like 'sqlite_autoindex_custom_unique_values%' or name = 'custom_unique_values_item' group by name`
        .execute(db)
        .catch(() => ({ rows: [] as { name: string; bytes: number }[] }));
  log(
    `custom: index sizes (${pg ? 'PostgreSQL' : 'SQLite'}; 200,000 jobs in two accounts): ${
      sizes.rows.map((r) => `${r.name} ${(Number(r.bytes) / 1048576).toFixed(1)} MB`).join(', ') || 'dbstat unavailable'
    }`,
  );
  await database.close();

  server = await d.start(copy.env);
  const r = rng(31);
  const accountId = ds.accounts[0].accountId;
  let staff = 0;
  const w: Record<string, Workload> = {
    W1: { headers, path: '/users?recordsPerPage=50' },
    Wq: {
      headers,
      path: () =>
        `/jobs?q=${encodeURIComponent(`${['boil', 'radiat', 'leak', 'tap'][Math.floor(r() * 4)]} ${['leeds', 'york', 'bris'][Math.floor(r() * 3)]}`)}&recordsPerPage=50`,
    },
    Wcf: {
      headers,
      path: () =>
        `/jobs?where=${encodeURIComponent(`customFields.extId = "EXT-${ds.jobIds[Math.floor(r() * ds.jobIds.length)]}"`)}`,
    },
    W4: {
      method: 'POST',
      headers: json,
      path: '/users',
      itemsPerRequest: 10,
      body: () => JSON.stringify({ users: Array.from({ length: 10 }, () => userItem(r, accountId)) }),
    },
    W4cf: {
      method: 'POST',
      headers: json,
      path: '/users',
      itemsPerRequest: 10,
      body: () =>
        JSON.stringify({
          users: Array.from({ length: 10 }, () => ({
            ...userItem(r, accountId),
            customFields: { staffRef: `S-${process.pid}-${++staff}`, badge: staff % 100 },
          })),
        }),
    },
  };
  const results: Record<string, Measurement> = {};
  const row = async (key: string, label: string) => {
    const p = w[key].path;
    const probe = await fetch(`${server.url}${typeof p === 'string' ? p : p()}`, { headers });
    if (probe.status !== 200) log(`custom: ${key} answered ${probe.status}: ${(await probe.text()).slice(0, 300)}`);
    results[key] = await measure(server.url, w[key], load, server);
    record(key, label, results[key], server.peakRss().max);
    const m = results[key];
    log(`${label}: ${m.requestsPerSecond.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, ${m.errors} errors`);
  };
  w.W1c = w.W1;
  w.Wqn = w.Wq;
  await row('W1c', 'custom: W1 GET /users (reference)');
  results.W1 = results.W1c;
  for (const [key, label] of [
    ['Wq', 'custom: GET /jobs?q=<two words>&recordsPerPage=50 (100,000 jobs)'],
    ['Wcf', 'custom: GET /jobs?where=customFields.extId = "…" (100,000 jobs)'],
  ] as const)
    await row(key, label);
  // W4 with and without custom fields, in alternating turns (the machine's drift falls on both).
  const turn = { ...load, duration: Math.max(2, Math.round(load.duration / 2)) };
  const turns: Record<'W4' | 'W4cf', Measurement[]> = { W4: [], W4cf: [] };
  for (let i = 0; i < 2; i++) {
    for (const key of ['W4', 'W4cf'] as const)
      turns[key].push(await measure(server.url, w[key], { ...turn, warmup: i ? 0 : load.warmup }, server));
  }
  const avg = (ms: Measurement[]): Measurement => ({
    ...ms[0],
    requestsPerSecond: ms.reduce((a, m) => a + m.requestsPerSecond, 0) / ms.length,
    itemsPerSecond: ms.reduce((a, m) => a + (m.itemsPerSecond ?? 0), 0) / ms.length,
    errors: ms.reduce((a, m) => a + m.errors, 0),
  });
  record('W4c', 'custom: W4 POST /users (10 items), no custom fields', avg(turns.W4), server.peakRss().max);
  record('W4cf', 'custom: W4 with two custom fields each (one unique)', avg(turns.W4cf), server.peakRss().max);
  for (const k of ['W4', 'W4cf'] as const)
    log(`custom ${k}: ${avg(turns[k]).requestsPerSecond.toFixed(0)} req/s, ${avg(turns[k]).errors} errors`);
  // The search again on a server of the same data that remembers no answer (REMEMBER_ANSWERS=0):
  // what a search costs when its words were not asked since the jobs last changed.
  await server.stop();
  server = await d.start({ ...copy.env, REMEMBER_ANSWERS: '0' });
  await row('Wqn', 'custom: GET /jobs?q=<two words>, no remembered answers');
  const rate = (k: string) => results[k]?.requestsPerSecond ?? 0;
  const w4 = avg(turns.W4).requestsPerSecond;
  const w4cf = avg(turns.W4cf).requestsPerSecond;
  log(
    `custom ratios: q / W1 ${(rate('Wq') / rate('W1')).toFixed(2)} (target 0.5; no remembered answers ${(rate('Wqn') / rate('W1')).toFixed(2)}), customFields = / W1 ${(rate('Wcf') / rate('W1')).toFixed(2)} (target 0.5), W4 with custom fields / without ${(w4cf / w4).toFixed(2)} (target 0.85)`,
  );
  await server.stop();
  await copy.drop();
  const atLeast = (name: string, value: number, want: number): Target => ({
    name,
    value: Number.isFinite(value) ? value : undefined,
    ok: (v) => v >= want,
    want: `>= ${want}`,
  });
  return [
    atLeast('custom: GET /jobs?q=<two words> / W1', rate('Wq') / rate('W1'), 0.5),
    atLeast('custom: GET /jobs?where=customFields.<key> = "…" / W1', rate('Wcf') / rate('W1'), 0.5),
    atLeast('custom: W4 with two custom fields / without', w4cf / w4, 0.85),
  ];
}

/** `node dist/bench/custom.js`: these rows alone (DATABASE_URL for PostgreSQL), without the main data set. */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const flags = (
    JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start
    .split(/\s+/)
    .filter((a) => a.startsWith('--'));
  const freePort = () =>
    new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
  const n = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  const log = (m: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}`);
  await benchCustom({
    root,
    databaseUrl: process.env.DATABASE_URL || undefined,
    load: { connections: n('BENCH_CONNECTIONS', 20), duration: n('BENCH_DURATION', 6), warmup: n('BENCH_WARMUP', 2) },
    log,
    record: () => {},
    start: async (env) =>
      startProcess(
        root,
        'dist/src/server.js',
        {
          ...env,
          HOST: '127.0.0.1',
          PORT: String(await freePort()),
          WORKERS: '1',
          LOG_LEVEL: 'warn',
          RATE_LIMIT_API: '1000000000',
          RATE_LIMIT_AUTH: '1000000000',
        },
        // BENCH_NODE_ARGS: extra node flags for the server (e.g. --cpu-prof --cpu-prof-dir=.bench/profiles).
        { workers: 1, args: [...flags, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)] },
      ),
  });
  process.exit(0);
}
