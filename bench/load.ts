import autocannon, { type Request, type Result } from 'autocannon';

/** The load settings every measured server gets, ours and the ceilings alike. */
export interface LoadSettings {
  connections: number;
  /** Seconds measured, after `warmup` seconds that are not. */
  duration: number;
  warmup: number;
}

export interface Measurement {
  requestsPerSecond: number;
  /** Items written per second (requests/s x items per request) for batch writes. */
  itemsPerSecond?: number;
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  /** Latency percentiles (ms) for the distribution chart. */
  percentiles: [number, number][];
  /**
   * The server's CPU time per answered request (µs), when its process was given: steadier than the
   * rate on a busy machine, since what else runs there slows the rate but not the work per request.
   */
  cpuUs?: number;
  /**
   * Database statements per answered request, from the server's /metrics (every statement it ran,
   * background work included), when the server was given a way to count them.
   */
  statements?: number;
}

export interface Workload {
  method?: string;
  headers: Record<string, string>;
  /** A fixed path, or one drawn per request. */
  path: string | (() => string);
  body?: () => string;
  /** Headers drawn per request (an Idempotency-Key), besides the fixed ones. */
  requestHeaders?: () => Record<string, string>;
  itemsPerRequest?: number;
  /**
   * A second request sent on the same connection after each first one, made from its answer (an
   * action on the item the first created). Both are counted as requests.
   */
  followUp?: (answer: string) => { method: string; path: string; headers: Record<string, string> };
}

const PERCENTILES: [string, number][] = [
  ['p2_5', 2.5],
  ['p50', 50],
  ['p75', 75],
  ['p90', 90],
  ['p97_5', 97.5],
  ['p99', 99],
  ['p99_9', 99.9],
  ['p99_99', 99.99],
];

async function fire(url: string, w: Workload, connections: number, duration: number): Promise<Result> {
  const request: Request = {
    method: w.method ?? 'GET',
    // Drawn per request, so reads do not hit one row and writes do not repeat one body.
    setupRequest: (req) => ({
      ...req,
      path: typeof w.path === 'string' ? w.path : w.path(),
      ...(w.body ? { body: w.body() } : {}),
      ...(w.requestHeaders ? { headers: { ...w.headers, ...w.requestHeaders() } } : {}),
    }),
  };
  const requests = [request];
  const followUp = w.followUp;
  if (followUp) {
    request.onResponse = (_status, body, context) => void (context.answer = String(body));
    requests.push({ setupRequest: (req, context) => ({ ...req, ...followUp(String(context.answer ?? '')) }) });
  }
  return autocannon({ url, connections, duration, headers: w.headers, requests, timeout: 10 });
}

/** Warms the server up (JIT, caches), then measures. Any non-2xx answer counts as an error. */
export async function measure(
  baseUrl: string,
  w: Workload,
  s: LoadSettings,
  server?: { cpuSeconds(): number; statements?(): Promise<number | undefined> },
): Promise<Measurement> {
  if (s.warmup > 0) await fire(baseUrl, w, s.connections, s.warmup);
  const statementsBefore = await server?.statements?.();
  const cpuBefore = server?.cpuSeconds();
  const r = await fire(baseUrl, w, s.connections, s.duration);
  const cpu = server && cpuBefore !== undefined ? server.cpuSeconds() - cpuBefore : undefined;
  const statementsAfter = statementsBefore === undefined ? undefined : await server?.statements?.();
  const answered = r['2xx'] + r.non2xx;
  const ok = r['2xx'];
  const rps = ok / r.duration;
  return {
    requestsPerSecond: rps,
    itemsPerSecond: w.itemsPerRequest ? rps * w.itemsPerRequest : undefined,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mean: r.latency.average,
    errors: r.errors + r.non2xx,
    percentiles: PERCENTILES.map(([k, p]) => [p, r.latency[k]]),
    cpuUs: cpu !== undefined && answered > 0 ? (cpu * 1e6) / answered : undefined,
    statements:
      statementsBefore !== undefined && statementsAfter !== undefined && answered > 0
        ? (statementsAfter - statementsBefore) / answered
        : undefined,
  };
}
