import { sql } from 'kysely';
import type { WorkingCopy } from './datasets.js';
import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import type { Target } from './report.js';
import type { RunningServer } from './server.js';
import { rng } from './seed.js';

/**
 * Maintenance's rows (PRODUCT §16, issue 46), on our server of the main data set:
 * - creating 1,000 weekly agreements with a 90-day horizon (each with an asset of its own: about
 *   13,000 jobs and as many visits), 10 per request, 4 requests at a time: jobs and visits made per
 *   second, against W4's items per second measured just before and after (target >= 0.5);
 * - the daily roll of that horizon: the agreements' horizon moved 90 days further on (and their
 *   `rolled_on` set back) in the database, the server's own roll (every minute, in the background)
 *   makes the new jobs and visits: per second from the first seen to the last agreement rolled,
 *   against the same W4 (target >= 0.5);
 * - `GET /jobs?where=assets.id = N` (an asset's service history, N drawn over the 1,000 assets)
 *   against W2 in interleaved turns (target >= 0.5);
 * - W1 alone, and W1 while a second such roll runs beside it.
 * `BENCH_ONLY=maintenance` runs these rows alone (the data set is still the main one).
 */
export interface MaintenanceContext {
  server: RunningServer;
  /** The server's database, opened from the bench (to move the horizon and watch the roll). */
  copy: WorkingCopy;
  /** The JSON request headers of an Administrator of the first account. */
  headers: Record<string, string>;
  accountId: number;
  w1: Workload;
  w2: Workload;
  w4: Workload;
  load: LoadSettings;
  turnOf(load: LoadSettings, round: number): LoadSettings;
  mergeTurns(ms: Measurement[]): Measurement | undefined;
  record(key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string): void;
  log(m: string): void;
}

const AGREEMENTS = 1000;
const PER_REQUEST = 10;
const AT_ONCE = 4;
const ROUNDS = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchMaintenance(c: MaintenanceContext): Promise<{ ratios: string[]; targets: Target[] }> {
  const { server, headers } = c;
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const ids = async (collection: string, items: unknown[]) =>
    ((await api('POST', `/${collection}`, { [collection]: items }))[collection] as { id: number }[]).map((x) => x.id);
  const tag = Date.now().toString(36);
  const client = (await ids('clients', [{ name: `Maintained ${tag}` }]))[0];
  const site = (await ids('sites', [{ client: { id: client }, name: `Plant room ${tag}` }]))[0];
  const assets: number[] = [];
  for (let i = 0; i < AGREEMENTS; i += 100)
    assets.push(
      ...(await ids(
        'assets',
        Array.from({ length: 100 }, (_, k) => ({ site: { id: site }, name: `Boiler ${i + k}`, kind: 'boiler' })),
      )),
    );
  const today = new Date().toISOString().slice(0, 10);
  const days = ['MO', 'TU', 'WE', 'TH', 'FR'];
  const agreement = (k: number) => ({
    client: { id: client },
    site: { id: site },
    name: `Bench care ${tag}`,
    jobTitle: `Boiler service ${k}`,
    startDate: today,
    recurrence: `FREQ=WEEKLY;BYDAY=${days[k % days.length]}`,
    visitTime: `${String(8 + (k % 9)).padStart(2, '0')}:00`,
    horizonDays: 90,
    assets: [{ id: assets[k] }],
  });

  const database = c.copy.open();
  const made = async () => {
    const row = await database.db
      .selectFrom('jobs')
      .innerJoin('agreements', (j) =>
        j.onRef('agreements.account_id', '=', 'jobs.account_id').onRef('agreements.id', '=', 'jobs.agreement_id'),
      )
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('jobs.account_id', '=', c.accountId)
      .where('agreements.name', '=', `Bench care ${tag}`)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  try {
    // W4, then the 1,000 agreements, then W4 again.
    const w4: Measurement[] = [await measure(server.url, c.w4, c.turnOf(c.load, 0), server)];
    c.log(`maintenance: creating ${AGREEMENTS} weekly agreements, ${PER_REQUEST} per request, ${AT_ONCE} at a time`);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < AGREEMENTS) {
          const from = next;
          next += PER_REQUEST;
          await api('POST', '/agreements', {
            agreements: Array.from({ length: PER_REQUEST }, (_, k) => agreement(from + k)),
          });
        }
      }),
    );
    const createMs = performance.now() - started;
    const jobs = await made();
    w4.push(await measure(server.url, c.w4, c.turnOf(c.load, 1), server));
    const w4m = c.mergeTurns(w4);
    const w4Items = w4m?.itemsPerSecond ?? w4m?.requestsPerSecond;
    const createRate = (2 * jobs) / (createMs / 1000);
    c.record('MAw4', `W4 POST /users, before and after the agreements, ${w4.length} turns`, w4m, server.peakRss().max);
    const createNote = `${jobs} jobs + ${jobs} visits in ${(createMs / 1000).toFixed(1)} s: ${createRate.toFixed(0)} items/s`;
    c.record('MAcreate', `POST /agreements: ${AGREEMENTS} weekly, 90-day horizon`, undefined, undefined, createNote);

    /** Moves the horizon `days` further and waits for the server's roll: items made per second. */
    const roll = async (horizon: number, beside?: () => Promise<void>) => {
      const before = await made();
      await sql`update agreements set horizon_days = ${horizon}, rolled_on = '2000-01-01'
        where account_id = ${c.accountId} and name = ${`Bench care ${tag}`}`.execute(database.db);
      // The roll runs every minute: wait for its first new job (the poll before it is the start).
      let seen = performance.now();
      for (let waited = 0; ; waited += 50) {
        if (waited > 130_000) throw new Error('the roll did not start within 130 s');
        const polled = performance.now();
        if ((await made()) > before) break;
        seen = polled;
        await sleep(50);
      }
      const besideDone = beside?.();
      for (let waited = 0; ; waited += 50) {
        if (waited > 300_000) throw new Error('the roll did not end within 300 s');
        const { rows } = await sql<{ n: number }>`select count(*) as n from agreements
          where account_id = ${c.accountId} and name = ${`Bench care ${tag}`} and rolled_on = '2000-01-01'`.execute(
          database.db,
        );
        if (Number(rows[0].n) === 0) break;
        await sleep(50);
      }
      const ms = performance.now() - seen;
      await besideDone;
      const n = (await made()) - before;
      return { n, ms, rate: (2 * n) / (ms / 1000) };
    };
    c.log('maintenance: the roll of a 90-day horizon (waits for the server roll, up to a minute)');
    const alone = await roll(180);
    const rollNote = `${alone.n} jobs + ${alone.n} visits in ${(alone.ms / 1000).toFixed(1)} s: ${alone.rate.toFixed(0)} items/s`;
    c.record(
      'MAroll',
      `the daily roll: ${AGREEMENTS} agreements' horizon moved 90 days`,
      undefined,
      undefined,
      rollNote,
    );

    // An asset's service history against W2, interleaved.
    const r = rng(46);
    const history: Workload = {
      headers,
      path: () =>
        `/jobs?where=${encodeURIComponent(`assets.id = ${assets[Math.floor(r() * assets.length)]}`)}&recordsPerPage=50&sort=-id`,
    };
    const turns = { w2: [] as Measurement[], history: [] as Measurement[], w1: [] as Measurement[] };
    for (let round = 0; round < ROUNDS; round++) {
      const turn = c.turnOf(c.load, round);
      turns.w2.push(await measure(server.url, c.w2, turn, server));
      turns.history.push(await measure(server.url, history, turn, server));
      turns.w1.push(await measure(server.url, c.w1, turn, server));
    }
    const w2 = c.mergeTurns(turns.w2);
    const hist = c.mergeTurns(turns.history);
    const w1 = c.mergeTurns(turns.w1);
    const rss = server.peakRss().max;
    c.record('MAw2', `W2 GET /jobs?where=title~pump, ${ROUNDS} turns`, w2, rss);
    c.record('MAhistory', `GET /jobs?where=assets.id = N (N of 1,000 assets), ${ROUNDS} turns`, hist, rss);
    c.record('MAw1', `W1 GET /users alone, ${ROUNDS} turns`, w1, rss);

    // W1 again while a second roll (another 90 days) runs beside it.
    c.log('maintenance: W1 beside a second roll (waits for the server roll, up to a minute)');
    let w1Rolling: Measurement | undefined;
    const second = await roll(270, async () => {
      w1Rolling = await measure(server.url, c.w1, { ...c.load, warmup: 0, duration: 3 }, server);
    });
    c.record(
      'MAw1roll',
      `W1 GET /users while the roll runs (${(second.ms / 1000).toFixed(1)} s, ${2 * second.n} items)`,
      w1Rolling,
      server.peakRss().max,
    );
    const f2 = (v?: number) => (v === undefined ? 'n/a' : v.toFixed(2));
    const createRatio = w4Items ? createRate / w4Items : undefined;
    const rollRatio = w4Items ? alone.rate / w4Items : undefined;
    const historyRatio = hist && w2 ? hist.requestsPerSecond / w2.requestsPerSecond : undefined;
    const w1Ratio = w1 && w1Rolling ? w1Rolling.requestsPerSecond / w1.requestsPerSecond : undefined;
    const ratios = [
      `  maintenance: creating ${AGREEMENTS} agreements ${createNote}; / W4 items/s (${w4Items?.toFixed(0) ?? 'n/a'}) ${f2(createRatio)}`,
      `  maintenance: the roll ${rollNote}; / W4 items/s ${f2(rollRatio)}`,
      `  maintenance: GET /jobs?where=assets.id = N / W2 ${f2(historyRatio)}; W1 beside a roll / W1 alone ${f2(w1Ratio)} (p99 ${w1Rolling?.p99 ?? 'n/a'} ms / ${w1?.p99 ?? 'n/a'} ms)`,
    ];
    for (const line of ratios) c.log(line.trim());
    return {
      ratios,
      targets: [
        {
          name: 'agreements created (jobs+visits/s) / W4 items/s',
          value: createRatio,
          ok: (v) => v >= 0.5,
          want: '>= 0.5',
        },
        { name: 'the daily roll (jobs+visits/s) / W4 items/s', value: rollRatio, ok: (v) => v >= 0.5, want: '>= 0.5' },
        { name: 'GET /jobs?where=assets.id = N / W2', value: historyRatio, ok: (v) => v >= 0.5, want: '>= 0.5' },
      ],
    };
  } finally {
    await database.close();
  }
}
