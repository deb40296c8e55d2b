import { sql } from 'kysely';
import { exportAccount } from '../src/accounts/transfer/export.js';
import { importAccount } from '../src/accounts/transfer/import.js';
import { registry } from '../src/collections/index.js';
import { insertRows, untyped } from '../src/db/runner.js';
import type { Dialect } from '../src/db/index.js';
import { appWithTenants, call } from '../test/helpers.js';

/**
 * PRODUCT §19's rows, standalone (`node dist/bench/reports.js [sqlite|postgres]`, PostgreSQL from
 * TEST_DATABASE_URL): a summary of INVOICES invoices grouped by month and client against a bare
 * GROUP BY of the same rows in the same run (target ≥ 0.5 of its rate); then the account's export
 * (items/s, the process's peak RSS) and its import into a new account (items/s).
 */
const INVOICES = Number(process.env.BENCH_REPORT_INVOICES ?? 100_000);
const CLIENTS = 100;
const RUNS = 10;

async function main(dialect: Dialect) {
  const { t, a } = await appWithTenants(dialect);
  const db = t.database.db;
  const clients = await call(t.app, a.token, 'POST', '/clients', {
    clients: Array.from({ length: CLIENTS }, (_, i) => ({ name: `Client ${i}` })),
  });
  const ids = clients.body.clients.map((c: { id: number }) => c.id);
  const made = await call(t.app, a.token, 'POST', '/invoices', {
    invoices: [{ client: { id: ids[0] }, lines: [{ description: 'x', quantity: 1, unitPrice: 1 }] }],
  });
  const template = (await untyped(db)
    .selectFrom('invoices')
    .selectAll()
    .where('id', '=', made.body.invoices[0].id)
    .executeTakeFirstOrThrow()) as Record<string, unknown>;
  delete template.id;
  delete template.version;
  delete template.search_vector;
  await t.database.transaction(async (tx) => {
    for (let done = 1; done < INVOICES; done += 1000) {
      const rows = Array.from({ length: Math.min(1000, INVOICES - done) }, (_, i) => {
        const n = done + i;
        const month = String((n % 12) + 1).padStart(2, '0');
        return {
          ...template,
          client_id: ids[n % CLIENTS],
          issue_date: `2026-${month}-${String((n % 28) + 1).padStart(2, '0')}`,
          total: (n % 1000) * 10_000 + 1,
        };
      });
      await insertRows(tx, 'invoices', rows);
    }
  });
  const url = '/invoices/summary?groupBy=month(issueDate),client&aggregate=count,sum(total)&recordsPerPage=1000';
  const time = async (fn: () => Promise<unknown>) => {
    await fn();
    const start = performance.now();
    for (let i = 0; i < RUNS; i++) await fn();
    return RUNS / ((performance.now() - start) / 1000);
  };
  const summary = await time(async () => {
    const res = await call(t.app, a.token, 'GET', url);
    if (res.status !== 200) throw new Error(res.raw);
  });
  const bare = await time(() =>
    sql`select client_id, substr(issue_date, 1, 7), count(*), sum(total) from invoices where account_id = ${a.accountId} group by 1, 2 order by 2, 1`.execute(
      db,
    ),
  );
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const lines: string[] = [];
  let start = performance.now();
  const { items } = await exportAccount(t.database, registry, t.services.blobs, a.accountId, { hidden: true }, (l) => {
    lines.push(l);
  });
  const exportRate = items / ((performance.now() - start) / 1000);
  const renamed = lines.map((l) => l.replace(/"login":"([^"]+)"/, '"login":"$1-copy"'));
  start = performance.now();
  await importAccount(
    t.database,
    registry,
    t.services.blobs,
    (async function* () {
      yield* renamed;
    })(),
  );
  const importRate = items / ((performance.now() - start) / 1000);
  clearInterval(sampler);
  console.log(
    JSON.stringify({
      dialect,
      invoices: INVOICES,
      summaryPerSecond: Math.round(summary * 10) / 10,
      bareGroupByPerSecond: Math.round(bare * 10) / 10,
      ratio: Math.round((summary / bare) * 100) / 100,
      exportItemsPerSecond: Math.round(exportRate),
      importItemsPerSecond: Math.round(importRate),
      // Includes the export's lines kept in memory here for the import (not so in the CLI, which streams).
      peakRssMb: Math.round(peak / 1e6),
    }),
  );
  await t.close();
}

await main((process.argv[2] as Dialect) ?? 'sqlite');
