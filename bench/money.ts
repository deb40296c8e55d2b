import { sql } from 'kysely';
import { issueToken } from '../src/auth/tokens.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import type { CustomBenchDeps } from './custom.js';
import { dataset, workingCopy } from './datasets.js';
import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import type { Target } from './report.js';
import { rng, userItem, type AccountSize } from './seed.js';

/**
 * Money's rows (issue 28, PRODUCT §9), on a data set of its own: ten accounts, the first with
 * JOBS jobs of 20 billable `actual` charges each (the charges written directly into the working
 * copy, as the charges collection writes them, before the server starts).
 * - An invoice made from a job of 20 charges and issued: each connection sends POST /invoices
 *   {job} then POST /invoices/ID/issue, over fresh jobs, at 32 connections, in turns with W4 (POST
 *   /users of 10 items) on the same server; invoices/s × 20 is reported as lines/s (each of the
 *   two requests counts 10), and its ratio to W4's items/s: target >= 0.5.
 * - 1,000 issues at once, 100 drafts in each of the ten accounts: the rate, and every account's
 *   numbers checked gapless (INV-000001 … its count, no duplicate, every issue answered 200).
 * - The server's peak RSS over both: target <= 150 MB.
 */
const JOBS = Number(process.env.BENCH_MONEY_JOBS ?? 4000);
const CHARGES = 20;
const ACCOUNTS = 10;
const DRAFTS = 100;
const ROUNDS = 3;
const SIZES: AccountSize[] = Array.from({ length: ACCOUNTS }, (_, i) => ({
  users: 10,
  clients: 5,
  jobs: i === 0 ? JOBS : 0,
  visits: 0,
}));

export interface MoneyBenchDeps extends CustomBenchDeps {
  turnOf(load: LoadSettings, round: number): LoadSettings;
  mergeTurns(ms: Measurement[]): Measurement | undefined;
}

/** Runs the rows; answers the report's ratio lines and target lines. */
export async function benchMoney(d: MoneyBenchDeps): Promise<{ ratios: string[]; targets: Target[] }> {
  const { log } = d;
  const ds = await dataset(d.root, 'money', SIZES, d.databaseUrl, log);
  const copy = await workingCopy(d.root, ds, SIZES, d.databaseUrl);
  const database = copy.open();
  const now = Date.now();
  const first = ds.accounts[0].accountId;
  // 20 charges on every job of the first account: 1.5 × 10.50 = 15.75 each, no tax.
  await sql`with recursive n(k) as (select 1 union all select k + 1 from n where k < ${CHARGES})
    insert into charges (account_id, job_id, kind, description, unit_price, quantity, subtotal, tax, total, created, modified)
    select j.account_id, j.id, 'labour', 'Bench work ' || n.k, 105000, 1500, 157500, 0, 157500, ${now}, ${now}
    from jobs j cross join n where j.account_id = ${first} order by j.id, n.k`.execute(database.db);
  const jobIds = (
    await database.db.selectFrom('jobs').select('id').where('account_id', '=', first).orderBy('id').execute()
  ).map((j) => j.id);
  const accounts = await Promise.all(
    ds.accounts.map(async (a) => {
      const grant = {
        clientId: ds.clientId,
        userId: a.adminId,
        accountId: a.accountId,
        permissions: [...ALL_PERMISSIONS],
      };
      const client = await database.db
        .selectFrom('clients')
        .select('id')
        .where('account_id', '=', a.accountId)
        .executeTakeFirstOrThrow();
      const { token } = await issueToken(database.db, 'access', grant, now);
      return {
        accountId: a.accountId,
        clientId: client.id,
        headers: { authorization: `Bearer ${token}`, 'x-version': '1.0' },
      };
    }),
  );
  await database.close();
  log(`money: ${jobIds.length} jobs of ${CHARGES} charges in account ${first}; ${ACCOUNTS} accounts`);

  const server = await d.start(copy.env);
  const headers = accounts[0].headers;
  const json = { ...headers, 'content-type': 'application/json' };
  const r = rng(28);
  let next = 0;
  const w4: Workload = {
    method: 'POST',
    headers: json,
    path: '/users',
    itemsPerRequest: 10,
    body: () => JSON.stringify({ users: Array.from({ length: 10 }, () => userItem(r, first)) }),
  };
  const invoiceAndIssue: Workload = {
    method: 'POST',
    headers: json,
    path: '/invoices',
    itemsPerRequest: CHARGES / 2,
    body: () => {
      if (next === jobIds.length) log(`money: every job invoiced; raise BENCH_MONEY_JOBS (${JOBS})`);
      return JSON.stringify({ invoices: [{ job: { id: jobIds[next++ % jobIds.length] } }] });
    },
    followUp: (answer) => {
      let id = 0;
      try {
        id = (JSON.parse(answer) as { invoices?: { id: number }[] }).invoices?.[0]?.id ?? 0;
      } catch {
        // An answer that is no JSON: the issue of invoice 0 fails and counts as an error.
      }
      return { method: 'POST', path: `/invoices/${id}/issue`, headers };
    },
  };
  const load32 = { ...d.load, connections: 32 };
  const turns = { w4: [] as Measurement[], pair: [] as Measurement[] };
  for (let round = 0; round < ROUNDS; round++) {
    const t = d.turnOf(load32, round);
    turns.w4.push(await measure(server.url, w4, t, server));
    turns.pair.push(await measure(server.url, invoiceAndIssue, t, server));
  }
  const m = { w4: d.mergeTurns(turns.w4), pair: d.mergeTurns(turns.pair) };
  const rssTurns = server.peakRss().max;

  // 1,000 issues at once: 100 drafts of one line in each account, then every issue sent together.
  const api = async (h: Record<string, string>, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: body === undefined ? h : { ...h, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const drafts = await Promise.all(
    accounts.map(async (a) => {
      const made = await api(a.headers, 'POST', '/invoices', {
        invoices: Array.from({ length: DRAFTS }, (_, k) => ({
          client: { id: a.clientId },
          lines: [{ description: `Service ${k}`, quantity: 1, unitPrice: 99.5 }],
        })),
      });
      if (made.status !== 200) throw new Error(`money: drafts not made: ${JSON.stringify(made.body).slice(0, 300)}`);
      return (made.body.invoices as { id: number }[]).map((i) => ({ a, id: i.id }));
    }),
  );
  const started = performance.now();
  const answers = await Promise.all(
    drafts.flat().map(async (x) => {
      const res = await api(x.a.headers, 'POST', `/invoices/${x.id}/issue`);
      return { ...x, res, ms: performance.now() - started };
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const rate = answers.length / seconds;
  // Gapless: every issue answered, and each account's issued invoices (these and the first row's)
  // are as many as its highest number, each number once (the unique index) in its answers.
  const faults: string[] = [];
  const failed = answers.filter((x) => x.res.status !== 200);
  if (failed.length)
    faults.push(`${failed.length} issues failed (${JSON.stringify(failed[0].res.body).slice(0, 200)})`);
  for (const a of accounts) {
    const where = encodeURIComponent('number != null');
    const count = await api(a.headers, 'GET', `/invoices?where=${where}&recordsPerPage=1&fields=id`);
    const top = await api(a.headers, 'GET', `/invoices?where=${where}&sort=-number&recordsPerPage=1&fields=number`);
    const n = count.body.metadata?.recordsCount as number;
    const highest = top.body.invoices?.[0]?.number as string | undefined;
    const mine = answers.filter((x) => x.a === a && x.res.status === 200).map((x) => x.res.body.invoices[0].number);
    if (highest !== `INV-${String(n).padStart(6, '0')}` || new Set(mine).size !== mine.length)
      faults.push(
        `account ${a.accountId}: ${n} issued, highest ${highest}, ${mine.length - new Set(mine).size} repeated`,
      );
  }
  if (faults.length) log(`money: invoice numbers NOT gapless: ${faults.join('; ')}`);
  const rss = server.peakRss().max;
  await server.stop();
  await copy.drop();

  d.record('MOw4', `money: W4 POST /users (10 items), 32 connections, ${ROUNDS} turns`, m.w4, rssTurns);
  d.record(
    'MOinvoice',
    `money: POST /invoices {job of ${CHARGES} charges} + /issue, 32 connections, ${ROUNDS} turns (items = lines)`,
    m.pair,
    rssTurns,
  );
  // All sent at once: each answer's latency is the time it took from the start.
  const ms = answers.map((x) => x.ms).sort((a, b) => a - b);
  const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))];
  const issues: Measurement = {
    requestsPerSecond: rate,
    p50: at(50),
    p99: at(99),
    mean: ms.reduce((a, b) => a + b, 0) / ms.length,
    errors: failed.length,
    percentiles: [2.5, 50, 75, 90, 97.5, 99, 99.9, 99.99].map((p) => [p, at(p)]),
  };
  d.record('MOissues', `money: ${answers.length} issues at once across ${ACCOUNTS} accounts (wall clock)`, issues, rss);
  const lines = m.pair?.itemsPerSecond;
  const ratio = lines !== undefined && m.w4?.itemsPerSecond ? lines / m.w4.itemsPerSecond : undefined;
  const summary = `  money: invoice + issue ${lines?.toFixed(0) ?? 'n/a'} lines/s (${((lines ?? 0) / CHARGES).toFixed(0)} invoices/s) / W4 ${m.w4?.itemsPerSecond?.toFixed(0) ?? 'n/a'} items/s = ${ratio?.toFixed(2) ?? 'n/a'}; ${answers.length} concurrent issues ${rate.toFixed(0)}/s, numbers gapless per account: ${faults.length ? 'NO' : 'yes'}; peak RSS ${rss.toFixed(0)} MB`;
  log(summary.trim());
  return {
    ratios: [summary],
    targets: [
      { name: 'money: invoice + issue lines/s / W4 items/s', value: ratio, ok: (v) => v >= 0.5, want: '>= 0.5' },
      {
        name: `money: numbering faults after ${answers.length} concurrent issues (gaps, repeats, failed issues)`,
        value: faults.length,
        ok: (v) => v === 0,
        want: '0',
      },
      { name: 'money: peak RSS MB', value: rss, ok: (v) => v <= 150, want: '<= 150' },
    ],
  };
}
