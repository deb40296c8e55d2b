import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { periodsBegun } from '../../src/domain/maintenance/billing.js';
import { localDate } from '../../src/time/local-time.js';
import { DIALECTS, skipUnless } from '../helpers.js';
import { createSite, request, sleep, startServer, type ServerProcess, type Site } from './process.js';

/**
 * PRODUCT §16's exactly-once across real processes: two server processes on one database
 * (PostgreSQL; SQLite: two writers on one file) create agreements and roll them at once (their
 * background roll every 300 ms here), and a process is SIGKILLed in the middle of generating a
 * large batch of occurrences, and again in the middle of a roll. After a restart: one job per
 * agreement and date, one visit per job, one invoice per period, and nothing partial (an
 * agreement is there with all its occurrences, or not at all).
 */
const DAY = 86_400_000;

async function stop(p: ServerProcess | undefined) {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await p.exited;
}

for (const dialect of DIALECTS) {
  describe(`agreements exactly once across processes and a SIGKILL (${dialect})`, { skip: skipUnless(dialect) }, () => {
    test(
      'two processes create and roll at once; killed mid-generation and mid-roll; restarted',
      { timeout: 120_000 },
      async () => {
        const site: Site = await createSite(dialect, { FSM_TEST_ROLL_EVERY_MS: '300' });
        const db = site.db.database.db;
        const servers: ServerProcess[] = [];
        try {
          const zone = (
            await db
              .selectFrom('accounts')
              .select('time_zone')
              .where('id', '=', site.accountId)
              .executeTakeFirstOrThrow()
          ).time_zone;
          const today = () => localDate(Date.now(), zone);
          const start = localDate(Date.now() - 100 * DAY, zone);
          const [p1, p2] = await Promise.all([startServer(site.env), startServer(site.env)]);
          servers.push(p1, p2);
          const call = (p: ServerProcess, method: string, path: string, body?: unknown) =>
            request(p.origin, site.token, method, path, body);
          const client = (await call(p1, 'POST', '/clients', { clients: [{ name: 'Maintained' }] })).body.clients[0].id;
          const agreement = (name: string, horizonDays: number) => ({
            client: { id: client },
            name,
            jobTitle: 'Daily check',
            startDate: start,
            recurrence: 'FREQ=DAILY',
            horizonDays,
            price: 10,
          });

          // Both processes create at once: 30 agreements of 31 occurrences each, 5 per request.
          const made = await Promise.all(
            Array.from({ length: 6 }, (_, k) =>
              call(k % 2 ? p2 : p1, 'POST', '/agreements', {
                agreements: Array.from({ length: 5 }, () => agreement('small', 30)),
              }),
            ),
          );
          for (const r of made) assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));

          const check = async (name: string, horizon: number) => {
            const { rows } = await sql<{ id: number; jobs: number; dates: number; visits: number }>`
            select a.id,
              (select count(*) from jobs j where j.account_id = a.account_id and j.agreement_id = a.id
                and j.deleted = 0 and j.occurrence >= ${today()}) as jobs,
              (select count(distinct j.occurrence) from jobs j where j.account_id = a.account_id
                and j.agreement_id = a.id) as dates,
              (select count(*) from visits v join jobs j on j.account_id = v.account_id and j.id = v.job_id
                where j.account_id = a.account_id and j.agreement_id = a.id and v.deleted = 0) as visits
            from agreements a where a.account_id = ${site.accountId} and a.name = ${name} order by a.id`.execute(db);
            for (const r of rows) {
              assert.equal(Number(r.jobs), horizon + 1, `agreement ${r.id}: one job per date of the horizon`);
              const all = await db
                .selectFrom('jobs')
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .where('account_id', '=', site.accountId)
                .where('agreement_id', '=', r.id)
                .executeTakeFirstOrThrow();
              assert.equal(Number(r.dates), Number(all.n), `agreement ${r.id}: no date twice`);
              assert.equal(Number(r.visits), Number(all.n), `agreement ${r.id}: one visit per job`);
            }
            return rows.length;
          };
          assert.equal(await check('small', 30), 30);

          const settled = async (name: string, within = 60_000) => {
            for (let waited = 0; waited < within; waited += 100) {
              const { rows } = await sql<{ n: number }>`select count(*) as n from agreements
              where account_id = ${site.accountId} and name = ${name} and rolled_on = '2000-01-01'`.execute(db);
              if (Number(rows[0].n) === 0) return;
              await sleep(100);
            }
            assert.fail(`the roll of '${name}' did not finish in ${within} ms`);
          };

          // Both processes roll at once: the horizon moved 30 days on, and monthly billing switched on.
          await sql`update agreements set horizon_days = 60, billing = 'monthly', rolled_on = '2000-01-01'
          where account_id = ${site.accountId} and name = 'small'`.execute(db);
          await settled('small');
          assert.equal(await check('small', 60), 30);
          const periods = periodsBegun(start, 'monthly', today());
          const { rows: billed } = await sql<{ agreement_id: number; n: number; distinct_n: number }>`
          select agreement_id, count(*) as n, count(distinct agreement_period) as distinct_n from invoices
          where account_id = ${site.accountId} and agreement_id is not null group by agreement_id`.execute(db);
          assert.equal(billed.length, 30, 'every agreement billed');
          for (const b of billed) {
            assert.equal(Number(b.n), periods.length, `agreement ${b.agreement_id}: one invoice per period`);
            assert.equal(Number(b.distinct_n), periods.length);
          }

          // SIGKILL in the middle of generating: 5 agreements of 201 occurrences in one request,
          // killed half way through the time the same request took unkilled.
          const started = performance.now();
          const timed = await call(p2, 'POST', '/agreements', {
            agreements: Array.from({ length: 5 }, () => agreement('timed', 200)),
          });
          assert.equal(timed.status, 200);
          const took = performance.now() - started;
          const doomed = call(p1, 'POST', '/agreements', {
            agreements: Array.from({ length: 5 }, () => agreement('big', 200)),
          });
          await sleep(took / 2);
          p1.child.kill('SIGKILL');
          const answer = await doomed;
          await p1.exited;
          const big = await check('big', 200);
          assert.ok(big === 0 || big === 5, `all 5 agreements or none: ${big}`);
          if (answer.status === 200) assert.equal(big, 5, 'an acknowledged batch is there');

          // SIGKILL in the middle of a roll: the survivor killed once it has made the first new job.
          const jobsNow = async () =>
            Number(
              (
                await db
                  .selectFrom('jobs')
                  .select((eb) => eb.fn.countAll<number>().as('n'))
                  .where('account_id', '=', site.accountId)
                  .executeTakeFirstOrThrow()
              ).n,
            );
          const before = await jobsNow();
          await sql`update agreements set horizon_days = 150, rolled_on = '2000-01-01'
          where account_id = ${site.accountId} and name = 'small' and id in (
            select id from agreements where account_id = ${site.accountId} and name = 'small' order by id limit 10)`.execute(
            db,
          );
          for (let waited = 0; (await jobsNow()) === before; waited += 20) {
            if (waited > 30_000) assert.fail('the roll did not start');
            await sleep(20);
          }
          p2.child.kill('SIGKILL');
          await p2.exited;
          const p3 = await startServer(site.env);
          servers.push(p3);
          await settled('small');
          const { rows: horizons } = await sql<{ h: number; n: number }>`select horizon_days as h, count(*) as n
          from agreements where account_id = ${site.accountId} and name = 'small' group by horizon_days order by h`.execute(
            db,
          );
          assert.deepEqual(
            horizons.map((r) => [Number(r.h), Number(r.n)]),
            [
              [60, 20],
              [150, 10],
            ],
          );
          for (const [h] of horizons.map((r) => [Number(r.h)])) {
            await sql`update agreements set name = ${`small-${h}`} where account_id = ${site.accountId}
            and name = 'small' and horizon_days = ${h}`.execute(db);
            assert.equal(await check(`small-${h}`, h), h === 60 ? 20 : 10);
          }
          // Still one invoice per period after the restart's roll.
          const { rows: after } = await sql<{ n: number; d: number }>`select count(*) as n,
          count(distinct agreement_id || ':' || agreement_period) as d from invoices
          where account_id = ${site.accountId} and agreement_id is not null`.execute(db);
          assert.equal(Number(after[0].n), Number(after[0].d));
          assert.equal(Number(after[0].n), 30 * periods.length);
        } finally {
          for (const p of servers) await stop(p);
          await site.close();
        }
      },
    );
  });
}
