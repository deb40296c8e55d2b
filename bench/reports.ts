import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { sql } from 'kysely';
import { insertRows, untyped } from '../src/db/runner.js';
import type { WorkingCopy } from './datasets.js';
import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import type { Target } from './report.js';
import type { RunningServer } from './server.js';

/**
 * Reports' rows (PRODUCT §19, issue 49), on our server of the main data set:
 * - a summary of INVOICES invoices of the first account grouped by month and client
 *   (`GET /invoices/summary`, one after another) against a bare `GROUP BY` of the same rows on a
 *   connection of the bench's own, in the same run: target >= 0.5 of its rate;
 * - the export of the second account (as seeded: 10,000 users, 1,000 clients, 100,000 jobs,
 *   200,000 visits): `GET /export` on a server started for it alone (items/s, its peak RSS), W1
 *   alone and W1 beside exports running one after another, in interleaved turns; then the CLI's
 *   `fsm accounts export` to a file (items/s, the CLI's peak RSS). Targets: both RSS <= 150 MB;
 * - `fsm accounts import` of that file (logins renamed: they are unique in the whole server) into
 *   the same database, against W4 measured just before: target >= 0.5 of W4's items/s.
 * `BENCH_ONLY=reports` runs these rows alone (the data set is still the main one).
 */
export interface ReportsContext {
  root: string;
  server: RunningServer;
  /** A fresh server on the same data (the export's memory is measured on it alone). */
  start(): Promise<RunningServer>;
  copy: WorkingCopy;
  /** The JSON request headers of an Administrator of the first account. */
  headers: Record<string, string>;
  /** The same, of the second account (the one exported). */
  exportHeaders: Record<string, string>;
  accountId: number;
  exportAccountId: number;
  w1: Workload;
  w4: Workload;
  load: LoadSettings;
  turnOf(load: LoadSettings, round: number): LoadSettings;
  mergeTurns(ms: Measurement[]): Measurement | undefined;
  record(key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string): void;
  log(m: string): void;
}

const INVOICES = Number(process.env.BENCH_REPORT_INVOICES ?? 100_000);
const CLIENTS = 100;
const RUNS = 10;
const ROUNDS = 2;
/** `npm run fsm`'s node flags and script (package.json): the CLI runs here as it runs there. */
const FSM = (
  JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { fsm: string } }
).scripts.fsm
  .split(/\s+/)
  .slice(1);

const rate = (n: number, ms: number) => n / (ms / 1000);
const f0 = (n: number) => Math.round(n).toLocaleString('en');

/** VmHWM (peak RSS) of a process in MB, or undefined once it is gone. */
function hwm(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the CLI with stdin and stdout on files (or stdout captured): its time, peak RSS and output. */
async function cli(
  c: ReportsContext,
  args: string[],
  io: { stdin?: string; stdout?: string },
): Promise<{ ms: number; peakMb: number; out: string }> {
  const stdin = io.stdin ? fs.openSync(io.stdin, 'r') : 'ignore';
  const stdout = io.stdout ? fs.openSync(io.stdout, 'w') : 'pipe';
  const started = performance.now();
  const child = spawn(process.execPath, [...FSM.map((a) => (a.startsWith('--') ? a : path.join(c.root, a))), ...args], {
    cwd: c.root,
    env: { ...process.env, ...c.copy.env, LOG_LEVEL: 'warn' },
    stdio: [stdin, stdout, 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  let peak = 0;
  // VmHWM only grows: the last reading before the exit is the peak, to within the 50 ms.
  const sampler = setInterval(() => (peak = Math.max(peak, hwm(child.pid!) ?? 0)), 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  const ms = performance.now() - started;
  for (const fd of [stdin, stdout]) if (typeof fd === 'number') fs.closeSync(fd);
  if (code !== 0) throw new Error(`fsm ${args.join(' ')} exited with ${code}: ${err}`);
  return { ms, peakMb: peak, out };
}

export async function benchReports(c: ReportsContext): Promise<{ ratios: string[]; targets: Target[] }> {
  const { server, headers } = c;
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, any>;
  };

  // 1. INVOICES invoices over CLIENTS of the first account's clients, a row each, over 12 months.
  c.log(`reports: ${INVOICES.toLocaleString('en')} invoices of ${CLIENTS} clients`);
  const database = c.copy.open();
  let summaryRate: number;
  let bareRate: number;
  try {
    const clients = (
      await untyped(database.db)
        .selectFrom('clients')
        .select('id')
        .where('account_id', '=', c.accountId)
        .orderBy('id')
        .limit(CLIENTS)
        .execute()
    ).map((r) => Number(r.id));
    const made = await api('POST', '/invoices', {
      invoices: [{ client: { id: clients[0] }, lines: [{ description: 'Service', quantity: 1, unitPrice: 1 }] }],
    });
    const template = (await untyped(database.db)
      .selectFrom('invoices')
      .selectAll()
      .where('id', '=', made.invoices[0].id)
      .executeTakeFirstOrThrow()) as Record<string, unknown>;
    for (const k of ['id', 'version', 'search_vector']) delete template[k];
    await database.transaction(async (tx) => {
      for (let done = 1; done < INVOICES; done += 1000)
        await insertRows(
          tx,
          'invoices',
          Array.from({ length: Math.min(1000, INVOICES - done) }, (_, i) => {
            const n = done + i;
            return {
              ...template,
              client_id: clients[n % clients.length],
              issue_date: `2026-${String((n % 12) + 1).padStart(2, '0')}-${String((n % 28) + 1).padStart(2, '0')}`,
              total: (n % 1000) * 10_000 + 1,
            };
          }),
        );
    });
    await sql`analyze invoices`.execute(database.db);
    const url = '/invoices/summary?groupBy=month(issueDate),client&aggregate=count,sum(total)&recordsPerPage=1000';
    const timed = async (fn: () => Promise<unknown>) => {
      await fn();
      const started = performance.now();
      for (let i = 0; i < RUNS; i++) await fn();
      return rate(RUNS, performance.now() - started);
    };
    const groups = (await api('GET', url)).metadata.recordsCount as number;
    // Interleaved: the summary, then the bare GROUP BY, twice each.
    const s: number[] = [];
    const b: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      s.push(await timed(() => api('GET', url)));
      b.push(
        await timed(() =>
          sql`select client_id, substr(issue_date, 1, 7), count(*), sum(total) from invoices where account_id = ${c.accountId} group by 1, 2 order by 2, 1`.execute(
            database.db,
          ),
        ),
      );
    }
    summaryRate = s.reduce((x, y) => x + y) / ROUNDS;
    bareRate = b.reduce((x, y) => x + y) / ROUNDS;
    c.record(
      'RPsummary',
      `GET /invoices/summary, ${INVOICES.toLocaleString('en')} invoices by month and client (${groups} groups), ${RUNS} in a row`,
      undefined,
      server.peakRss().max,
      `${summaryRate.toFixed(2)}/s`,
    );
    c.record(
      'RPbare',
      `bare GROUP BY of the same rows, ${RUNS} in a row`,
      undefined,
      undefined,
      `${bareRate.toFixed(2)}/s`,
    );
  } finally {
    await database.close();
  }

  // 2. The second account's export: GET /export on a server of its own, W1 beside it; the CLI's.
  const fresh = await c.start();
  let httpRate: number;
  let httpPeak: number;
  let w1Alone: Measurement | undefined;
  let w1Beside: Measurement | undefined;
  let exports = 0;
  try {
    const before = fresh.peakRss().max;
    const exportOnce = async () => {
      const started = performance.now();
      const res = await fetch(`${fresh.url}/export`, { headers: c.exportHeaders });
      if (res.status !== 200) throw new Error(`GET /export: ${res.status} ${(await res.text()).slice(0, 300)}`);
      let lines = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        for (const byte of chunk) if (byte === 10) lines++;
      exports++;
      return { items: lines - 1, ms: performance.now() - started };
    };
    const first = await exportOnce();
    const httpItems = first.items;
    httpRate = rate(first.items, first.ms);
    httpPeak = fresh.peakRss().max;
    c.record(
      'RPexport',
      `GET /export of one bench account (${f0(httpItems)} items), server alone`,
      undefined,
      httpPeak,
      `${f0(httpRate)} items/s`,
    );
    c.log(
      `reports: GET /export ${f0(httpItems)} items in ${(first.ms / 1000).toFixed(1)} s; RSS ${before} -> ${httpPeak} MB`,
    );
    const alone: Measurement[] = [];
    const beside: Measurement[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const turn = c.turnOf(c.load, round);
      alone.push(await measure(fresh.url, c.w1, turn, fresh));
      let stop = false;
      const running = (async () => {
        while (!stop) await exportOnce();
      })();
      beside.push(await measure(fresh.url, c.w1, turn, fresh));
      stop = true;
      await running;
    }
    w1Alone = c.mergeTurns(alone);
    w1Beside = c.mergeTurns(beside);
    httpPeak = fresh.peakRss().max;
    c.record('RPw1', `W1 GET /users, fresh server, ${ROUNDS} turns`, w1Alone, fresh.peakRss().max);
    c.record(
      'RPw1export',
      `W1 beside GET /export running (${exports} exports in all), ${ROUNDS} turns`,
      w1Beside,
      httpPeak,
    );
  } finally {
    await fresh.stop();
  }

  const dir = path.join(c.root, '.bench', 'run', 'reports');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'export.ndjson');
  const exported = await cli(c, ['accounts', 'export', '--account', String(c.exportAccountId)], { stdout: file });
  let cliItems = -1;
  const renamed = path.join(dir, 'import.ndjson');
  const to = fs.createWriteStream(renamed);
  for await (const line of readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })) {
    cliItems++;
    const text = line.startsWith('{"collection":"users"')
      ? line.replace(/"login":"([^"]*)"/, '"login":"$1-import"')
      : line;
    if (!to.write(`${text}\n`)) await new Promise<void>((resolve) => to.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => to.end(() => resolve()));
  const cliRate = rate(cliItems, exported.ms);
  c.record(
    'RPexportCli',
    `fsm accounts export (${f0(cliItems)} items) to a file`,
    undefined,
    exported.peakMb,
    `${f0(cliRate)} items/s`,
  );

  // 3. Its import into a new account, against W4 just before.
  const w4 = await measure(server.url, c.w4, c.load, server);
  c.record('RPw4', 'W4 POST /users (10 items), before the import', w4, server.peakRss().max);
  const imported = await cli(c, ['accounts', 'import'], { stdin: renamed });
  const result = JSON.parse(imported.out) as { items: number };
  if (result.items !== cliItems) throw new Error(`imported ${result.items} items of ${cliItems}`);
  const importRate = rate(result.items, imported.ms);
  c.record(
    'RPimport',
    `fsm accounts import of that export (${f0(result.items)} items)`,
    undefined,
    imported.peakMb,
    `${f0(importRate)} items/s`,
  );
  fs.rmSync(dir, { recursive: true, force: true });

  const ratio = (a?: number, b?: number) => (a !== undefined && b ? a / b : undefined);
  const summaryRatio = ratio(summaryRate, bareRate);
  const besideRatio = ratio(w1Beside?.requestsPerSecond, w1Alone?.requestsPerSecond);
  const importRatio = ratio(importRate, w4.itemsPerSecond);
  const f2 = (v?: number) => (v === undefined ? 'n/a' : v.toFixed(2));
  return {
    ratios: [
      `  reports: summary / bare GROUP BY ${f2(summaryRatio)}; W1 beside GET /export / alone ${f2(besideRatio)}; import / W4 items/s ${f2(importRatio)} (${f0(importRate)} / ${f0(w4.itemsPerSecond ?? 0)})`,
      `  reports: export ${f0(httpRate)} items/s (GET /export, server peak RSS ${f0(httpPeak)} MB), ${f0(cliRate)} items/s (CLI, peak RSS ${f0(exported.peakMb)} MB); import peak RSS ${f0(imported.peakMb)} MB`,
    ],
    targets: [
      { name: 'summary / bare GROUP BY', value: summaryRatio, ok: (v) => v >= 0.5, want: '>= 0.5' },
      { name: 'import items/s / W4 items/s', value: importRatio, ok: (v) => v >= 0.5, want: '>= 0.5' },
      { name: 'GET /export: server peak RSS MB', value: httpPeak, ok: (v) => v <= 150, want: '<= 150' },
      {
        name: 'fsm accounts export: peak RSS MB',
        value: exported.peakMb,
        ok: (v) => v <= 150,
        want: '<= 150',
      },
    ],
  };
}
