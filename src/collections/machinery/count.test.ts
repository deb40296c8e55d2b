import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, call, suiteWithTenants, newUser, skipUnless, type Tenant } from '../../../test/helpers.js';

/** Unfiltered lists read the row count migration 004's triggers keep: it must always equal count(*). */
for (const dialect of DIALECTS) {
  describe(`kept row counts (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const recordsCount = async (tenant: Tenant, collection: string, query = '') =>
      (await call(t.app, tenant.token, 'GET', `/${collection}${query}`)).body.metadata.recordsCount as number;
    const counted = async (table: string, accountId: number) =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(*) as n from ${sql.table(table)} where account_id = ${accountId}`.execute(t.database.db)
        ).rows[0].n,
      );

    it('follows creates, failed batches, deletes and cascades, per account', async () => {
      const created = await call(t.app, a.token, 'POST', '/users', {
        users: [newUser(a.accountId), newUser(a.accountId), newUser(a.accountId)],
      });
      assert.equal(created.status, 200, created.raw);
      assert.equal(await recordsCount(a, 'users'), 4);
      assert.equal(await recordsCount(b, 'users'), 1);
      // A failed batch rolls its counts back with its rows.
      assert.equal(
        (await call(t.app, a.token, 'POST', '/users', { users: [newUser(a.accountId), { firstName: 'x' }] })).status,
        422,
      );
      assert.equal(await recordsCount(a, 'users'), 4);
      assert.equal(
        (await call(t.app, a.token, 'DELETE', '/users', { users: [{ id: created.body.users[0].id }] })).status,
        200,
      );
      assert.equal(await recordsCount(a, 'users'), 3);
      assert.equal(await recordsCount(a, 'users'), await counted('users', a.accountId));

      const job = await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Boiler service' }] });
      assert.equal(job.status, 200, job.raw);
      const start = '2025-01-01T09:00:00Z';
      const visits = Array.from({ length: 3 }, () => ({
        job: { id: job.body.jobs[0].id },
        label: 'Visit',
        startTime: start,
        endTime: '2025-01-01T10:00:00Z',
      }));
      assert.equal((await call(t.app, a.token, 'POST', '/visits', { visits })).status, 200);
      assert.equal(await recordsCount(a, 'visits'), 3);
      // Deleting the job deletes its visits by cascade; the kept count follows.
      assert.equal((await call(t.app, a.token, 'DELETE', `/jobs/${job.body.jobs[0].id}`)).status, 200);
      assert.equal(await recordsCount(a, 'visits'), 0);
      assert.equal(await recordsCount(a, 'jobs'), 0);
      assert.equal(await recordsCount(a, 'statuses'), await counted('statuses', a.accountId));
    });

    it('filtered lists still count their rows', async () => {
      assert.equal(await recordsCount(a, 'users', `?where=${encodeURIComponent('firstName = "Bob"')}`), 2);
      assert.equal(await recordsCount(a, 'users', `?where=${encodeURIComponent('firstName = "Nobody"')}`), 0);
      // Every page tells the whole count: a short last page, a full one, one past the end, a search.
      const all = await counted('users', a.accountId);
      assert.ok(all >= 3, String(all));
      const filtered = `?where=${encodeURIComponent('id > 0')}&recordsPerPage=2`;
      for (const page of [1, 2, Math.ceil(all / 2), Math.ceil(all / 2) + 1, 50])
        assert.equal(await recordsCount(a, 'users', `${filtered}&page=${page}`), all, `page ${page}`);
      const bobs = await call(t.app, a.token, 'GET', `/users?q=bob&recordsPerPage=1&page=2`);
      assert.equal(bobs.body.metadata.recordsCount, 2, bobs.raw);
      assert.equal(
        (await call(t.app, a.token, 'GET', `/users?q=bob&recordsPerPage=1&page=3`)).body.metadata.recordsCount,
        2,
      );
    });

    it('remembered filtered counts follow every change, through the API or not', async () => {
      const pump = `?where=${encodeURIComponent('title ~ "pump"')}`;
      const made = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: [{ title: 'Pump A' }, { title: 'pump B' }, { title: 'Boiler' }],
      });
      assert.equal(made.status, 200, made.raw);
      const [, second, boiler] = made.body.jobs.map((j: { id: number }) => j.id);
      assert.equal(await recordsCount(a, 'jobs', pump), 2);
      assert.equal(await recordsCount(a, 'jobs', pump), 2); // remembered
      assert.equal(await recordsCount(b, 'jobs', pump), 0);
      assert.equal(
        (await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: boiler, title: 'Pump C' }] })).status,
        200,
      );
      assert.equal(await recordsCount(a, 'jobs', pump), 3);
      assert.equal((await call(t.app, a.token, 'DELETE', `/jobs/${second}`)).status, 200);
      assert.equal(await recordsCount(a, 'jobs', pump), 2);
      // Another process (or a cascade) changing rows without our code: the triggers still move the counter.
      await sql`update jobs set title = 'Boiler' where id = ${boiler}`.execute(t.database.db);
      assert.equal(await recordsCount(a, 'jobs', pump), 1);
      await sql`insert into jobs (account_id, title, reference, status_id, priority, created, modified, deleted)
        select account_id, 'pump D', 'J-X1', status_id, priority, created, modified, 0 from jobs where id = ${boiler}`.execute(
        t.database.db,
      );
      assert.equal(await recordsCount(a, 'jobs', pump), 2);
      // The other account's changes leave this account's count alone, and its own count is exact.
      assert.equal((await call(t.app, b.token, 'POST', '/jobs', { jobs: [{ title: 'pump E' }] })).status, 200);
      assert.equal(await recordsCount(b, 'jobs', pump), 1);
      assert.equal(await recordsCount(a, 'jobs', pump), 2);
      assert.equal(
        await recordsCount(a, 'jobs', pump),
        Number(
          (
            await sql<{
              n: number;
            }>`select count(*) as n from jobs where account_id = ${a.accountId} and lower(title) like '%pump%'`.execute(
              t.database.db,
            )
          ).rows[0].n,
        ),
      );
    });

    it("events are counted: an Administrator's /events reads the kept count, exact after writes, failures and purges", async () => {
      const events = async () => Number(await counted('events', a.accountId));
      assert.equal(await recordsCount(a, 'events'), await events());
      const made = await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'E1' }, { name: 'E2' }] });
      assert.equal(made.status, 200, made.raw);
      const failed = await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'E3' }, { name: '' }] });
      assert.notEqual(failed.status, 200);
      const before = await recordsCount(a, 'events');
      assert.equal(before, await events());
      await sql`delete from events where account_id = ${a.accountId} and id = (select min(id) from events where account_id = ${a.accountId})`.execute(
        t.database.db,
      );
      assert.equal(await recordsCount(a, 'events'), before - 1);
      assert.equal(await recordsCount(b, 'events'), Number(await counted('events', b.accountId)));
      // Read as every row: no scan of the account's events.
      const kept = await sql<{
        n: number;
      }>`select sum(value) as n from row_counts where tbl = 'events' and account_id = ${a.accountId}`.execute(
        t.database.db,
      );
      assert.equal(Number(kept.rows[0].n), before - 1);
    });
  });
}
