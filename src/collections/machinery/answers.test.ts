import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import {
  DIALECTS,
  addUser,
  call,
  createTenant,
  createTestApp,
  skipUnless,
  type Tenant,
  type TestApp,
} from '../../../test/helpers.js';

/**
 * Remembered list answers (answers.ts): a page asked again is answered from memory after one small
 * statement shows the table did not change in the account, and never once it did, whoever changed
 * it (the API, another process, SQL outside the server). Lists whose answer reads elsewhere or
 * changes with time are made afresh every time.
 */
for (const dialect of DIALECTS) {
  describe(`remembered list answers (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    let recording: string[] | undefined;
    before(async () => {
      // The files maintenance loop's poll of file_deletions runs on its own timer, not for a request.
      const background = /from "file_deletions"/;
      t = await createTestApp(dialect, {
        deliveries: false,
        observe: (_d, _s, _f, text) => (background.test(text) ? undefined : recording?.push(text)),
      });
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
      for (const tenant of [a, b]) {
        const made = await call(t.app, tenant.token, 'POST', '/clients', {
          clients: [{ name: `First of ${tenant.accountId}` }, { name: `Second of ${tenant.accountId}` }],
        });
        assert.equal(made.status, 200, made.raw);
      }
    });
    after(() => t?.close());

    /** The answer and the statements it took. */
    async function get(tenant: Tenant, url: string) {
      recording = [];
      const res = await call(t.app, tenant.token, 'GET', url);
      const sent = recording;
      recording = undefined;
      assert.equal(res.status, 200, res.raw);
      return { res, sent };
    }

    test("the same page again: the token's epoch and the table's version, the same bytes", async () => {
      const first = await get(a, '/clients?sort=-id');
      const again = await get(a, '/clients?sort=-id');
      assert.equal(again.res.raw, first.res.raw);
      assert.equal(again.sent.length, 2, again.sent.join('\n'));
      assert.match(again.sent[0], /auth_epoch/);
      assert.doesNotMatch(again.sent[1], /from "clients"/);
      assert.match(again.sent[1], /row_counts/);
    });

    test('many asking at once after a change: the page is read once, and each answer holds the change', async () => {
      await get(a, '/clients?recordsPerPage=2');
      const [first] = (await get(a, '/clients?recordsPerPage=2')).res.body.clients;
      const renamed = await call(t.app, a.token, 'PATCH', '/clients', {
        clients: [{ id: first.id, name: 'Renamed before the crowd' }],
      });
      assert.equal(renamed.status, 200, renamed.raw);
      recording = [];
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => call(t.app, a.token, 'GET', '/clients?recordsPerPage=2')),
      );
      const sent = recording;
      recording = undefined;
      for (const res of answers) {
        assert.equal(res.status, 200, res.raw);
        assert.equal(res.raw, answers[0].raw);
        assert.equal(res.body.clients[0].name, 'Renamed before the crowd');
      }
      assert.equal(sent.filter((s) => /from "clients"/.test(s)).length, 1, sent.join('\n'));
    });

    test('a change through the API is in the next answer', async () => {
      await get(a, '/clients');
      const first = (await get(a, '/clients')).res.body.clients[0];
      assert.equal(
        (
          await call(t.app, a.token, 'PATCH', '/clients', {
            clients: [{ id: first.id, name: 'Renamed through the API' }],
          })
        ).status,
        200,
      );
      const after = await get(a, '/clients');
      assert.equal(after.res.body.clients[0].name, 'Renamed through the API');
      assert.ok(
        after.sent.some((s) => /from "clients"/.test(s)),
        'the page was read again',
      );
    });

    test('a change made outside the server (SQL) is in the next answer', async () => {
      const first = (await get(a, '/clients')).res.body.clients[0];
      await get(a, '/clients');
      await sql`update clients set name = 'Renamed by SQL' where id = ${first.id}`.execute(t.database.db);
      assert.equal((await get(a, '/clients')).res.body.clients[0].name, 'Renamed by SQL');
      await sql`delete from clients where id = ${first.id}`.execute(t.database.db);
      const gone = (await get(a, '/clients')).res.body;
      assert.ok(!gone.clients.some((c: { id: number }) => c.id === first.id));
      assert.equal(gone.metadata.recordsCount, gone.clients.length);
    });

    test('accounts never share an answer, nor do pages or projections', async () => {
      assert.equal(
        (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Third' }, { name: 'Fourth' }] })).status,
        200,
      );
      const mine = (await get(a, '/clients')).res.body.clients.map((c: { name: string }) => c.name);
      const theirs = (await get(b, '/clients')).res.body.clients.map((c: { name: string }) => c.name);
      assert.ok(
        theirs.every((n: string) => n.endsWith(`of ${b.accountId}`)),
        JSON.stringify(theirs),
      );
      assert.ok(!mine.some((n: string) => n.endsWith(`of ${b.accountId}`)));
      const page2 = (await get(a, '/clients?recordsPerPage=1&page=2')).res.body;
      assert.equal(page2.clients.length, 1);
      assert.notEqual(page2.clients[0].id, (await get(a, '/clients?recordsPerPage=1')).res.body.clients[0].id);
      assert.deepEqual(Object.keys((await get(a, '/clients?fields=name')).res.body.clients[0]), ['id', 'name']);
    });

    test('a search (q) is remembered per words and order, and a change to a searched field is in the next answer', async () => {
      const made = await call(t.app, a.token, 'POST', '/clients', {
        clients: [{ name: 'Boiler Leeds one' }, { name: 'Boiler Leeds two' }, { name: 'Boiler York' }],
      });
      assert.equal(made.status, 200, made.raw);
      const ids = made.body.clients.map((c: { id: number }) => c.id);
      const search = (url: string) => get(a, url);
      const first = await search('/clients?q=boil%20leeds');
      assert.deepEqual(first.res.body.clients.map((c: { id: number }) => c.id).sort(), ids.slice(0, 2).sort());
      const again = await search('/clients?q=boil%20leeds');
      assert.equal(again.res.raw, first.res.raw);
      assert.ok(!again.sent.some((s) => /from "clients"/.test(s)), again.sent.join('\n'));
      // Other words, another order (sort given: not ranked), another account: answers of their own.
      const york = await search('/clients?q=boil%20york');
      assert.deepEqual(
        york.res.body.clients.map((c: { id: number }) => c.id),
        [ids[2]],
      );
      const sorted = await search('/clients?q=boil%20leeds&sort=-id');
      assert.deepEqual(
        sorted.res.body.clients.map((c: { id: number }) => c.id),
        [ids[1], ids[0]],
      );
      assert.ok(sorted.sent.some((s) => /from "clients"/.test(s)));
      assert.equal((await search('/clients?q=boil%20leeds')).res.raw, first.res.raw);
      assert.deepEqual((await get(b, '/clients?q=boil%20leeds')).res.body.clients, []);
      // Renamed away from the words (through the API, then by SQL outside the server): gone at once.
      assert.equal(
        (await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: ids[0], name: 'Boiler Hull' }] })).status,
        200,
      );
      const after = await search('/clients?q=boil%20leeds');
      assert.deepEqual(
        after.res.body.clients.map((c: { id: number }) => c.id),
        [ids[1]],
      );
      assert.equal(after.res.body.metadata.recordsCount, 1);
      await sql`delete from clients where id = ${ids[1]}`.execute(t.database.db);
      const none = await search('/clients?q=boil%20leeds');
      assert.deepEqual(none.res.body.clients, []);
      assert.equal(none.res.body.metadata.recordsCount, 0);
    });

    test("an 'own' scope is remembered per caller, and a change to what it reads (a visit, by SQL) is in the next answer", async () => {
      const post = async (collection: string, item: Record<string, unknown>) => {
        const res = await call(t.app, a.token, 'POST', `/${collection}`, { [collection]: [item] });
        assert.equal(res.status, 200, res.raw);
        return res.body[collection][0].id as number;
      };
      const x = await addUser(t, a, 'contractor');
      const y = await addUser(t, a, 'contractor');
      const job = await post('jobs', { title: 'Remembered per crew' });
      await post('notes', { job: { id: job }, body: 'Gate code 1234' });
      const visit = await post('visits', {
        job: { id: job },
        user: { id: x.id },
        label: 'Survey',
        startTime: '2026-12-01T09:00:00Z',
        endTime: '2026-12-01T10:00:00Z',
      });
      const as = async (token: string, url: string) => {
        recording = [];
        const res = await call(t.app, token, 'GET', url);
        const sent = recording;
        recording = undefined;
        assert.equal(res.status, 200, res.raw);
        return { res, sent };
      };
      const jobIds = (r: { res: { body: { jobs: { id: number }[] } } }) => r.res.body.jobs.map((j) => j.id);
      const eventKeys = (r: { res: { body: { events: { collection: string; item: { id: number } }[] } } }) =>
        r.res.body.events.map((e) => `${e.collection}:${e.item.id}`).sort();

      const first = await as(x.token, '/jobs');
      assert.deepEqual(jobIds(first), [job]);
      const again = await as(x.token, '/jobs');
      assert.equal(again.res.raw, first.res.raw);
      assert.ok(!again.sent.some((s) => /from "jobs"/.test(s)), again.sent.join('\n'));
      // Another Contractor's answer is their own, never x's.
      assert.deepEqual(jobIds(await as(y.token, '/jobs')), []);
      // x's events (one a page: the count is read, and remembered, too), twice.
      const xEvents = await as(x.token, '/events?recordsPerPage=1');
      const xEventsAgain = await as(x.token, '/events?recordsPerPage=1');
      assert.equal(xEventsAgain.res.raw, xEvents.res.raw);
      assert.ok(!xEventsAgain.sent.some((s) => /from "events"/.test(s)), xEventsAgain.sent.join('\n'));
      // As an Administrator's: the token's epoch, then one statement for the versions of events and visits.
      assert.equal(xEventsAgain.sent.length, 2, xEventsAgain.sent.join('\n'));
      assert.match(xEventsAgain.sent[1], /"row_counts".*"row_counts"/s);
      const seen = eventKeys(await as(x.token, '/events?recordsPerPage=100'));
      assert.ok(seen.includes(`jobs:${job}`) && seen.includes(`visits:${visit}`), seen.join());
      const counted = xEvents.res.body.metadata.recordsCount;
      assert.equal(counted, seen.length);

      // The visit moved to y outside the server: no event, but the visits' version moves.
      await sql`update visits set user_id = ${y.id} where id = ${visit}`.execute(t.database.db);
      assert.deepEqual(jobIds(await as(x.token, '/jobs')), []);
      assert.deepEqual(jobIds(await as(y.token, '/jobs')), [job]);
      // x keeps the visit's events (assigned to them then), not the job's nor its note's.
      const now = eventKeys(await as(x.token, '/events?recordsPerPage=100'));
      assert.ok(!now.includes(`jobs:${job}`) && now.includes(`visits:${visit}`), now.join());
      assert.equal((await as(x.token, '/events?recordsPerPage=1')).res.body.metadata.recordsCount, now.length);
      assert.ok(now.length < counted);
    });

    test('answers that read other tables or change with time are made every time', async () => {
      // Expanded associations read another table; a file's downloadUrl is signed for 15 minutes.
      await get(a, '/users?fields=*,role.name');
      assert.ok((await get(a, '/users?fields=*,role.name')).sent.some((s) => /from "users"/.test(s)));
      const up = await call(t.app, a.token, 'POST', '/files/upload?name=a.txt', 'hello', {
        'content-type': 'text/plain',
      });
      assert.equal(up.status, 200, up.raw);
      const first = (await get(a, '/files')).res.body.files[0].downloadUrl;
      t.clock.now += 60_000;
      const later = await get(a, '/files');
      assert.ok(later.sent.some((s) => /from "files"/.test(s)));
      assert.notEqual(later.res.body.files[0].downloadUrl, first);
    });
  });
}
