import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { DIALECTS, skipUnless } from '../helpers.js';
import { createSite, headers, request, rssMiB, sleep, startServer, type Site } from './process.js';

/**
 * Sustained load and graceful shutdown, against the real server process on loopback.
 * Soak: 64 connections of mixed reads and writes for a fixed time (SOAK_SECONDS, default 30 on
 * SQLite, half that on PostgreSQL): no 5xx, no lost write, memory flat. Shutdown: SIGTERM in the
 * middle of a write load loses no acknowledged request and answers late arrivals in the envelope.
 */
type Autocannon = (opts: Record<string, unknown>) => Promise<Record<string, any>>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
const SOAK_S = Number(process.env.SOAK_SECONDS ?? 30);

async function countUsers(site: Site, ids: number[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const r = await (site.db.database.db as any)
      .selectFrom('users')
      .select((eb: any) => eb.fn.countAll().as('n'))
      .where('account_id', '=', site.accountId)
      .where('id', 'in', ids.slice(i, i + 500))
      .executeTakeFirstOrThrow();
    n += Number(r.n);
  }
  return n;
}

for (const dialect of DIALECTS) {
  describe(`sustained load (${dialect})`, { skip: skipUnless(dialect) }, () => {
    test(`soak: 64 connections of mixed reads and writes`, { timeout: 180_000 }, async (t) => {
      const seconds = dialect === 'sqlite' ? SOAK_S : Math.ceil(SOAK_S / 2);
      const site = await createSite(dialect);
      const server = await startServer(site.env);
      try {
        // Something to read, and a warm-up so the start figure is the working set, not the cold process.
        await request(server.origin, site.token, 'POST', '/jobs', {
          jobs: [{ title: 'Soak job' }, { title: 'Another' }],
        });
        await autocannon({
          url: server.origin,
          connections: 8,
          duration: 2,
          headers: headers(site.token),
          path: '/users?recordsPerPage=20',
        });
        const rssStart = rssMiB(server.child.pid!);
        const acked: number[] = [];
        let writes = 0;
        let n = 0;
        const h = headers(site.token);
        const result = await autocannon({
          url: server.origin,
          connections: 64,
          duration: seconds,
          timeout: 30,
          requests: [
            {
              method: 'GET',
              path: `/users?where=${encodeURIComponent('lastName ~ "soak" and hourlyRate >= 0')}&sort=-id&recordsPerPage=20`,
              headers: h,
            },
            {
              method: 'POST',
              path: '/users',
              headers: h,
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                body: JSON.stringify({
                  users: [
                    {
                      account: { id: site.accountId },
                      firstName: 'Soak',
                      lastName: `soak-${n++}`,
                      mobile: '+447700900123',
                    },
                  ],
                }),
              }),
              onResponse: (status: number, body: string) => {
                writes++;
                if (status === 200) acked.push(JSON.parse(body).users[0].id);
              },
            },
            { method: 'GET', path: '/jobs?fields=*,[*]', headers: h },
            { method: 'GET', path: '/statuses', headers: h },
          ],
        });
        const rssEnd = rssMiB(server.child.pid!);
        const stats = result.statusCodeStats as Record<string, { count: number }>;
        const fiveXx = Object.entries(stats)
          .filter(([s]) => Number(s) >= 500)
          .reduce((a, [, v]) => a + v.count, 0);
        const found = await countUsers(site, acked);
        t.diagnostic(
          `${dialect}: ${seconds} s, 64 connections: ${result.requests.total} requests (${Math.round(result.requests.average)} req/s), ` +
            `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; statuses ${JSON.stringify(Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, v.count])))}; ` +
            `errors ${result.errors}, timeouts ${result.timeouts}; writes ${writes}, acknowledged ${acked.length}, found ${found}; RSS ${rssStart} MiB -> ${rssEnd} MiB`,
        );
        assert.equal(fiveXx, 0, '5xx answers under load');
        assert.equal(result.errors, 0, 'connection errors under load');
        assert.equal(result.non2xx, 0, `non-2xx answers: ${JSON.stringify(stats)}`);
        assert.ok(acked.length > 100, 'too few writes to prove anything');
        assert.equal(found, acked.length, 'acknowledged writes missing');
        // Flat: no more than half again the warmed-up working set (a leak of a few KiB per request
        // would add hundreds of MiB over this many requests).
        assert.ok(rssEnd <= rssStart * 1.5 + 32, `RSS grew from ${rssStart} to ${rssEnd} MiB`);
        assert.equal(server.child.exitCode, null);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
        await site.close();
      }
    });

    test('graceful shutdown under load (SIGTERM) loses no acknowledged request', { timeout: 60_000 }, async (t) => {
      const site = await createSite(dialect);
      const server = await startServer(site.env);
      try {
        const acked: number[] = [];
        const statuses = new Map<number, number>();
        let stopping = false;
        let afterSigterm = 0;
        let i = 0;
        const worker = async () => {
          // Runs until the server is gone: refused connections end the loop.
          for (;;) {
            const sentAfterSigterm = stopping;
            const r = await request(server.origin, site.token, 'POST', '/users', {
              users: [1, 2].map(() => ({
                account: { id: site.accountId },
                firstName: 'Term',
                lastName: `term-${i++}`,
                mobile: '+447700900123',
              })),
            });
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (r.status === 200) {
              acked.push(...r.body.users.map((u: { id: number }) => u.id));
              if (stopping && !sentAfterSigterm) afterSigterm++;
            } else if (r.status !== 0) {
              assert.equal(r.status, 503, `during shutdown: ${r.status} ${JSON.stringify(r.body)}`);
              assert.equal(r.body.error.code, 1503);
              assert.equal(r.headers!.get('x-version'), '1.0');
            }
            if (r.status === 0 && stopping) return;
          }
        };
        const load = Promise.all(Array.from({ length: 32 }, worker));
        await sleep(1500);
        stopping = true;
        server.child.kill('SIGTERM');
        const code = await server.exited;
        await load;
        const found = await countUsers(site, acked);
        t.diagnostic(
          `${dialect}: statuses ${JSON.stringify(Object.fromEntries(statuses))}; ${acked.length} user writes acknowledged (${afterSigterm} batches finished after SIGTERM), ${found} found; exit code ${code}`,
        );
        assert.equal(code, 0, 'a clean exit');
        assert.equal(found, acked.length);
        assert.ok(acked.length > 50);
      } finally {
        server.child.kill('SIGKILL');
        await site.close();
      }
    });
  });
}
