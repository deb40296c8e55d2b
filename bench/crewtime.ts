import { measure, type LoadSettings, type Measurement, type Workload } from './load.js';
import type { RunningServer } from './server.js';
import { rng } from './seed.js';
import { startBenchReceiver } from './webhooks.js';

/**
 * Crew time's rows (issue 30), on our server of the main data set, in interleaved turns so the
 * machine's drift falls on all alike:
 * - `POST /locations` (one ping) at 32 connections, beside W4 at 32 connections, and again with a
 *   webhook subscribed to `*` (each ping is an event): target >= 0.8 of W4's requests per second;
 * - a check-in then a check-out of a visit (requests alternate over fresh visits, each check-out
 *   trailing its check-in by LAG visits), beside W5: target >= 0.5 of W5's requests per second.
 * `BENCH_ONLY=crewtime` runs these rows alone (the data set is still the main one).
 */
export interface CrewTimeContext {
  server: RunningServer;
  /** The JSON request headers of W4 (a token of the first account's Administrator). */
  headers: Record<string, string>;
  w4: Workload;
  w5: Workload;
  userIds: number[];
  jobIds: number[];
  load: LoadSettings;
  turnOf(load: LoadSettings, round: number): LoadSettings;
  mergeTurns(ms: Measurement[]): Measurement | undefined;
  record(key: string, label: string, m: Measurement | undefined, rssMb?: number, note?: string): void;
  log(m: string): void;
}

const ROUNDS = 3;
const LAG = 256;

export async function crewTime(c: CrewTimeContext): Promise<void> {
  const { server, headers } = c;
  const load32 = { ...c.load, connections: 32 };
  const api = async (method: string, url: string, body: unknown) => {
    const res = await fetch(`${server.url}${url}`, { method, headers, body: JSON.stringify(body) });
    const json = (await res.json()) as Record<string, { id: number }[]>;
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const r = rng(30);
  // Enough visits for every turn's check-ins at a few thousand requests a second.
  const count = Number(process.env.BENCH_CREW_VISITS ?? 40_000);
  c.log(`crew time: creating ${count} visits`);
  const visits: number[] = [];
  for (let i = 0; i < count; i += 100) {
    const items = Array.from({ length: Math.min(100, count - i) }, (_, k) => ({
      job: { id: c.jobIds[Math.floor(r() * c.jobIds.length)] },
      user: { id: c.userIds[(i + k) % c.userIds.length] },
      label: `Bench visit ${i + k}`,
      startTime: '2031-01-01T09:00:00Z',
      endTime: '2031-01-01T10:00:00Z',
    }));
    visits.push(...(await api('POST', '/visits', { visits: items })).visits.map((v) => v.id));
  }
  const ping: Workload = {
    method: 'POST',
    headers,
    path: '/locations',
    itemsPerRequest: 1,
    body: () =>
      JSON.stringify({
        locations: [{ lat: -90 + r() * 180, lng: -180 + r() * 360, accuracy: Math.round(r() * 50) }],
      }),
  };
  // checkIn(0), …, checkIn(LAG), checkOut(0), checkIn(LAG+1), checkOut(1), …
  let next = 0;
  let outs = 0;
  let turn = false;
  const pair: Workload = {
    method: 'POST',
    headers,
    path: () => {
      turn = !turn && next >= LAG;
      if (turn) return `/visits/${visits[outs++ % visits.length]}/checkOut`;
      return `/visits/${visits[next++ % visits.length]}/checkIn`;
    },
  };
  const rx = await startBenchReceiver();
  const hook = await api('POST', '/webhooks', { webhooks: [{ url: rx.url, events: ['*'], active: false }] });
  const hookId = hook.webhooks[0].id;
  const turns = { w4: [] as Measurement[], ping: [] as Measurement[], hook: [] as Measurement[] };
  const writes = { w5: [] as Measurement[], pair: [] as Measurement[] };
  for (let round = 0; round < ROUNDS; round++) {
    const t = c.turnOf(load32, round);
    turns.w4.push(await measure(server.url, c.w4, t, server));
    turns.ping.push(await measure(server.url, ping, t, server));
    await api('PATCH', `/webhooks/${hookId}`, { webhooks: [{ id: hookId, active: true }] });
    turns.hook.push(await measure(server.url, ping, t, server));
    await api('PATCH', `/webhooks/${hookId}`, { webhooks: [{ id: hookId, active: false }] });
    const u = c.turnOf(c.load, round);
    writes.w5.push(await measure(server.url, c.w5, u, server));
    writes.pair.push(await measure(server.url, pair, u, server));
  }
  await fetch(`${server.url}/webhooks/${hookId}`, {
    method: 'DELETE',
    headers: { authorization: headers.authorization, 'x-version': '1.0' },
  });
  await rx.close();
  const rss = server.peakRss().max;
  const m = {
    w4: c.mergeTurns(turns.w4),
    ping: c.mergeTurns(turns.ping),
    hook: c.mergeTurns(turns.hook),
    w5: c.mergeTurns(writes.w5),
    pair: c.mergeTurns(writes.pair),
  };
  c.record('CTw4', `W4 POST /users, 32 connections, ${ROUNDS} turns`, m.w4, rss);
  c.record('CTping', `POST /locations (1 item), 32 connections, ${ROUNDS} turns`, m.ping, rss);
  c.record('CThook', `POST /locations with a webhook on *, 32 connections, ${ROUNDS} turns`, m.hook, rss);
  c.record('CTw5', `W5 PATCH /jobs, ${ROUNDS} turns`, m.w5, rss);
  c.record('CTpair', `POST /visits/ID/checkIn, /checkOut alternating, ${ROUNDS} turns`, m.pair, rss);
  const per = (a?: Measurement, b?: Measurement) =>
    a && b ? (a.requestsPerSecond / b.requestsPerSecond).toFixed(2) : 'n/a';
  c.log(
    `crew time ratios (same run): POST /locations / W4 ${per(m.ping, m.w4)} (target >= 0.8), with a webhook on * ${per(m.hook, m.w4)}; check-in/check-out / W5 ${per(m.pair, m.w5)} (target >= 0.5)`,
  );
}
