import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * W4 with one webhook subscribed to `*`: a local receiver answering 204 records when each
 * delivery arrives and the event's `occurred`, for the delivery throughput and lag.
 */
export async function startBenchReceiver() {
  const arrivals: { at: number; occurred: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { occurred?: string } };
        arrivals.push({ at: Date.now(), occurred: Date.parse(body.data?.occurred ?? '') });
      } catch {
        // not ours
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Waits until no delivery arrived for `quietMs` (the queue drained), at most `maxMs`. */
export async function drained(arrivals: unknown[], quietMs = 3000, maxMs = 180_000): Promise<boolean> {
  const end = Date.now() + maxMs;
  let last = arrivals.length;
  let still = Date.now();
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    if (arrivals.length !== last) {
      last = arrivals.length;
      still = Date.now();
    } else if (Date.now() - still >= quietMs) return true;
  }
  return false;
}

/** Deliveries per second while they flowed, and the lag from commit to arrival (p50, p99, ms). */
export function deliveryStats(arrivals: { at: number; occurred: number }[]) {
  if (arrivals.length < 2) return undefined;
  const lags = arrivals
    .map((a) => a.at - a.occurred)
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  const pick = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))];
  const span = (arrivals[arrivals.length - 1].at - arrivals[0].at) / 1000;
  return {
    count: arrivals.length,
    perSecond: arrivals.length / Math.max(span, 0.001),
    lagP50: pick(50),
    lagP99: pick(99),
  };
}
