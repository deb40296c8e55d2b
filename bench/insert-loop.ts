import type { LoadSettings, Measurement } from './load.js';
import { userRow, type FloorDb } from './floor.js';
import { rng, userItem } from './seed.js';

const PERCENTILES = [50, 75, 90, 99, 99.9];

/**
 * "W4 ceiling: multi-row insert": W4's 10 new users (the same generator, the same columns as the
 * one-insert ceiling) inserted by one multi-row INSERT … RETURNING in one transaction, with no HTTP
 * at all: `connections` loops in this process, each one transaction after another, for the row's
 * warm-up and duration. What W4 and W5 are compared with (issue 51: W4 ≥ 0.8, W5 ≥ 0.5). On SQLite
 * the loops take turns (the driver is synchronous); on PostgreSQL they share the floor's pool.
 */
export async function multiRowInsertCeiling(
  db: FloorDb,
  accountId: number,
  roleId: number,
  load: LoadSettings,
  itemsPerTransaction = 10,
): Promise<Measurement> {
  const r = rng(51);
  const once = () => {
    const now = Date.now();
    return db.insertUsers(
      Array.from({ length: itemsPerTransaction }, () => userRow(userItem(r, accountId), accountId, roleId, now)),
    );
  };
  const run = async (seconds: number, latencies?: number[]) => {
    const until = performance.now() + seconds * 1000;
    let errors = 0;
    const loop = async () => {
      // Let the other loops (and the event loop) in between transactions, as requests would.
      while (performance.now() < until) {
        const start = performance.now();
        try {
          const made = await once();
          if (made.length !== itemsPerTransaction) errors++;
          else latencies?.push(performance.now() - start);
        } catch {
          errors++;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all(Array.from({ length: load.connections }, loop));
    return errors;
  };
  if (load.warmup > 0) await run(load.warmup);
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  const errors = await run(load.duration, latencies);
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    Number((latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0).toFixed(2));
  const tps = latencies.length / load.duration;
  return {
    requestsPerSecond: tps,
    itemsPerSecond: tps * itemsPerTransaction,
    p50: at(50),
    p99: at(99),
    mean: latencies.reduce((s, x) => s + x, 0) / Math.max(1, latencies.length),
    errors,
    percentiles: PERCENTILES.map((p) => [p, at(p)]),
    cpuUs: latencies.length ? (used.user + used.system) / latencies.length : undefined,
    statements: 3,
  };
}
