import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { registry } from '../src/collections/index.js';
import { addUser, suiteWithTenants, call, DIALECTS, skipUnless } from './helpers.js';

/** PRODUCT §19: `GET /<collection>/summary`, one GROUP BY in the database, on both dialects. */
for (const dialect of DIALECTS) {
  describe(`summaries (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let jones: number;
    let smith: number;
    let zed: number;
    let half: number;
    let crew: { id: number; token: string };
    let crewJob: number;
    const get = (url: string, token = a.token) => call(t.app, token, 'GET', url);
    const post = async (collection: string, items: unknown[], token = a.token) => {
      const res = await call(t.app, token, 'POST', `/${collection}`, { [collection]: items });
      assert.equal(res.status, 200, res.raw);
      return res.body[collection].map((x: { id: number }) => x.id) as number[];
    };
    const line = (unitPrice: number, quantity = 1) => ({ description: 'Work', quantity, unitPrice });

    before(async () => {
      // The account's zone: New York, 5 hours behind UTC in December.
      await sql`update accounts set time_zone = 'America/New_York' where id = ${a.accountId}`.execute(t.database.db);
      [jones, smith, zed, half] = await post('clients', [
        { name: 'Jones' },
        { name: 'Smith' },
        { name: 'Zed' },
        { name: 'Half' },
      ]);
      // Jones: 10.01 + 20.02 + 0.03; Smith: 5 and 7.5; Zed: 1.
      await post('invoices', [
        { client: { id: jones }, lines: [line(10.01)] },
        { client: { id: jones }, lines: [line(20.02)] },
        { client: { id: jones }, lines: [line(0.01, 3)] },
        { client: { id: smith }, lines: [line(5)] },
        { client: { id: smith }, lines: [line(7.5)] },
        { client: { id: zed }, lines: [line(1)] },
      ]);
      crew = await addUser(t, a, 'contractor');
      const jobs = await post('jobs', [
        { title: 'Roof', client: { id: jones }, dueDate: '2026-12-28' },
        { title: 'Door', client: { id: jones }, dueDate: '2027-01-03' },
        { title: 'Gutter', client: { id: smith }, dueDate: '2026-12-31' },
        { title: 'Fence' },
      ]);
      crewJob = jobs[0];
      // 2026-12-02T03:00Z is Dec 1st in New York; 2026-12-02T15:00Z is Dec 2nd.
      await post('visits', [
        {
          job: { id: jobs[0] },
          user: { id: crew.id },
          label: 'a',
          startTime: '2026-12-02T03:00:00Z',
          endTime: '2026-12-02T04:00:00Z',
        },
        { job: { id: jobs[1] }, label: 'b', startTime: '2026-12-02T15:00:00Z', endTime: '2026-12-02T16:30:00Z' },
        {
          job: { id: jobs[1] },
          label: 'c',
          startTime: '2026-12-02T01:00:00-05:00',
          endTime: '2026-12-02T02:00:00-05:00',
        },
      ]);
      // Account B's invoices are never counted in A's summaries.
      const [other] = await post('clients', [{ name: 'Other' }], b.token);
      await post(
        'invoices',
        [
          { client: { id: other }, lines: [line(999)] },
          { client: { id: other }, lines: [line(999)] },
        ],
        b.token,
      );
    });

    it('groups by association with exact sums, counts and averages rounded like the field', async () => {
      const res = await get(
        '/invoices/summary?groupBy=client&aggregate=count,sum(total),avg(total),min(total),max(total)',
      );
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.summary, [
        // (10.01 + 20.02 + 0.03) / 3 = 10.02
        {
          group: { client: { id: jones } },
          count: 3,
          'sum(total)': 30.06,
          'avg(total)': 10.02,
          'min(total)': 0.03,
          'max(total)': 20.02,
        },
        // 12.5 / 2 = 6.25
        {
          group: { client: { id: smith } },
          count: 2,
          'sum(total)': 12.5,
          'avg(total)': 6.25,
          'min(total)': 5,
          'max(total)': 7.5,
        },
        {
          group: { client: { id: zed } },
          count: 1,
          'sum(total)': 1,
          'avg(total)': 1,
          'min(total)': 1,
          'max(total)': 1,
        },
      ]);
      assert.deepEqual(res.body.metadata, { page: 1, pagesCount: 1, recordsPerPage: 50, recordsCount: 3 });
      // An average half-way between cents rounds away from zero: (0.01 + 0.02) / 2 = 0.015 → 0.02.
      await post('invoices', [
        { client: { id: half }, lines: [line(0.01)] },
        { client: { id: half }, lines: [line(0.02)] },
      ]);
      const halves = await get(
        `/invoices/summary?groupBy=client&aggregate=avg(total),sum(total)&where=client.id = ${half}`,
      );
      assert.deepEqual(halves.body.summary, [
        { group: { client: { id: half } }, 'avg(total)': 0.02, 'sum(total)': 0.03 },
      ]);
      // A null association is the null group, first.
      const jobs = await get('/jobs/summary?groupBy=client');
      assert.deepEqual(jobs.body.summary[0], { group: { client: null }, count: 1 });
      await post('invoices', [{ client: { id: half }, lines: [line(0.01)] }]);
      const third = await get(`/invoices/summary?groupBy=client&aggregate=avg(total)&where=client.id = ${half}`);
      // 0.04 / 3 = 0.01333… → 0.01
      assert.deepEqual(third.body.summary, [{ group: { client: { id: half } }, 'avg(total)': 0.01 }]);
    });

    it('aggregate defaults to count; no groupBy is one group of every item; where and paging apply', async () => {
      const all = await get('/invoices/summary');
      assert.deepEqual(all.body.summary, [{ group: {}, count: 9 }]);
      assert.equal(all.body.metadata.recordsCount, 1);
      const filtered = await get(
        `/invoices/summary?groupBy=client&where=${encodeURIComponent('client.name = "Smith"')}`,
      );
      assert.deepEqual(filtered.body.summary, [{ group: { client: { id: smith } }, count: 2 }]);
      const page2 = await get('/invoices/summary?groupBy=client&recordsPerPage=2&page=2');
      assert.deepEqual(page2.body.summary, [
        { group: { client: { id: zed } }, count: 1 },
        { group: { client: { id: half } }, count: 3 },
      ]);
      assert.deepEqual(page2.body.metadata, { page: 2, pagesCount: 2, recordsPerPage: 2, recordsCount: 4 });
      const past = await get('/invoices/summary?groupBy=client&recordsPerPage=2&page=5');
      assert.deepEqual(past.body.summary, []);
      assert.equal(past.body.metadata.recordsCount, 4);
      // B sees its own two only.
      assert.deepEqual((await get('/invoices/summary?aggregate=count,sum(total)', b.token)).body.summary, [
        { group: {}, count: 2, 'sum(total)': 1998 },
      ]);
    });

    it("groups by day, week, month and year in the account's time zone; several keys ascending, nulls first", async () => {
      const days = await get('/visits/summary?groupBy=day(startTime)');
      assert.equal(days.status, 200, days.raw);
      assert.deepEqual(days.body.summary, [
        { group: { 'day(startTime)': '2026-12-01' }, count: 1 },
        { group: { 'day(startTime)': '2026-12-02' }, count: 2 },
      ]);
      const weeks = await get('/jobs/summary?groupBy=week(dueDate),client');
      assert.deepEqual(weeks.body.summary, [
        { group: { 'week(dueDate)': null, client: null }, count: 1 },
        { group: { 'week(dueDate)': '2026-W53', client: { id: jones } }, count: 2 },
        { group: { 'week(dueDate)': '2026-W53', client: { id: smith } }, count: 1 },
      ]);
      const months = await get('/jobs/summary?groupBy=month(dueDate)&aggregate=min(dueDate),max(dueDate)');
      assert.deepEqual(months.body.summary, [
        { group: { 'month(dueDate)': null }, 'min(dueDate)': null, 'max(dueDate)': null },
        { group: { 'month(dueDate)': '2026-12' }, 'min(dueDate)': '2026-12-28', 'max(dueDate)': '2026-12-31' },
        { group: { 'month(dueDate)': '2027-01' }, 'min(dueDate)': '2027-01-03', 'max(dueDate)': '2027-01-03' },
      ]);
      const years = await get('/visits/summary?groupBy=year(startTime),state&aggregate=count,min(startTime)');
      assert.deepEqual(years.body.summary, [
        {
          group: { 'year(startTime)': '2026', state: 'scheduled' },
          count: 3,
          'min(startTime)': '2026-12-02T03:00:00.000Z',
        },
      ]);
    });

    it("a Contractor's summary counts only what their list shows", async () => {
      const list = await get('/jobs', crew.token);
      assert.deepEqual(
        list.body.jobs.map((j: { id: number }) => j.id),
        [crewJob],
      );
      const res = await get('/jobs/summary?groupBy=client', crew.token);
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.summary, [{ group: { client: { id: jones } }, count: 1 }]);
      assert.deepEqual((await get('/visits/summary', crew.token)).body.summary, [{ group: {}, count: 1 }]);
      // Without the collection's read permission: 403, as the list.
      const noRead = await a.tokenFor(a.adminId, ['clients.read']);
      assert.equal((await get('/jobs/summary', noRead)).status, 403);
    });

    it('every bad groupBy or aggregate is a 400 naming the modifier', async () => {
      const cases: [string, string][] = [
        ['groupBy=nope', 'groupBy'],
        ['groupBy=month(title)', 'groupBy'],
        ['groupBy=quarter(dueDate)', 'groupBy'],
        ['groupBy=title,client,status,dueDate', 'groupBy'],
        ['groupBy=month(day(dueDate))', 'groupBy'],
        ['groupBy=client,client', 'groupBy'],
        ['groupBy=', 'groupBy'],
        ['groupBy=month(', 'groupBy'],
        ['aggregate=sum(title)', 'aggregate'],
        ['aggregate=avg(dueDate)', 'aggregate'],
        ['aggregate=median(total)', 'aggregate'],
        ['aggregate=sum(sum(total))', 'aggregate'],
        ['aggregate=count(id)', 'aggregate'],
        ['aggregate=sum(nothing)', 'aggregate'],
        ['aggregate=total', 'aggregate'],
        ['where=title ~', 'where'],
        ['fields=title', 'fields'],
        ['page=0', 'page'],
      ];
      for (const [query, modifier] of cases) {
        const res = await get(`/jobs/summary?${query.replace(/total/g, 'title')}`);
        assert.equal(res.status, 400, `${query}: ${res.raw}`);
        assert.equal(res.body.error.code, 1002, query);
        assert.ok(JSON.stringify(res.body.error).includes(modifier), `${query}: ${res.raw}`);
      }
      const money = await get('/invoices/summary?aggregate=sum(notes)');
      assert.equal(money.status, 400);
      assert.match(JSON.stringify(money.body.error), /aggregate: 'sum\(notes\)': sum needs a number field/);
      // Only GET: a write method is 405.
      const posted = await call(t.app, a.token, 'POST', '/jobs/summary', {});
      assert.equal(posted.status, 405);
      assert.equal(posted.headers.allow, 'GET');
    });

    it('every collection answers its summary', async () => {
      for (const c of registry.list) {
        const res = await get(`/${c.name}/summary`);
        assert.equal(res.status, 200, `${c.name}: ${res.raw}`);
        assert.equal(res.body.summary.length, 1);
        assert.equal(typeof res.body.summary[0].count, 'number');
      }
    });
  });
}
