/**
 * The statements the bench's writes send (docs/performance.md, "Writes that talk less"), counted on
 * each database through the query observer every statement passes (Kysely's log, and SQLite's
 * direct runner): W4 (`POST /users`, 10 new users) and W5 (`PATCH /jobs`, 10 jobs' priority and
 * order number). A change that makes either send more statements fails here: a count, not a time.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, call, createTenant, createTestApp, skipUnless, type Tenant, type TestApp } from './helpers.js';

/**
 * Both requests: the token's revocation epoch, BEGIN, the account's custom field definitions of
 * the collection, the batch's events, COMMIT.
 */
const FRAME = 5;
/** W4: the default role (no `role` given), one multi-row INSERT … RETURNING of the users. */
const W4 = FRAME + 2;
/**
 * W5: the rows read (on PostgreSQL locked, in id order), their `requiredSkills` (the items as they
 * were, for the events' `changes`), one `UPDATE … FROM` over a JSON array of the rows. The lists
 * of rows whose lists the batch did not set are not read again (src/collections/machinery/write/changes.ts).
 */
const W5 = FRAME + 3;

for (const dialect of DIALECTS) {
  describe(`round trips of the bench's writes (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let recording: string[] | undefined;
    let jobIds: number[];
    let n = 0;
    before(async () => {
      // No webhook delivery worker: its polls would be counted with the request.
      t = await createTestApp(dialect, {
        deliveries: false,
        observe: (_d, _s, _f, sql) => {
          // The files' deletion sweep runs on its own timer, not for the request: not counted.
          if (!sql.includes('"file_deletions"')) recording?.push(sql);
        },
      });
      a = await createTenant(t);
      const created = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: Array.from({ length: 10 }, (_, i) => ({ title: `Boiler service ${i}` })),
      });
      assert.equal(created.status, 200, created.raw);
      jobIds = created.body.jobs.map((j: { id: number }) => j.id);
    });
    after(() => t.close());

    const users = () => ({
      users: Array.from({ length: 10 }, () => {
        n++;
        return {
          account: { id: a.accountId },
          firstName: `First${n}`,
          lastName: `Last${n}`,
          email: `user.${n}@example.com`,
          mobile: `+4477009${String(n).padStart(5, '0')}`,
          hourlyRate: 15 + n,
          isAssignable: n % 2 === 0,
        };
      }),
    });
    const jobs = () => ({
      jobs: jobIds.map((id) => ({ id, priority: ['low', 'high'][n++ % 2], orderNumber: `PO-${n}` })),
    });

    /** The statements one request sends, after the same kind of request once (so nothing is first-time work). */
    async function statementsOf(method: string, url: string, body: () => unknown) {
      assert.equal((await call(t.app, a.token, method, url, body())).status, 200);
      recording = [];
      const res = await call(t.app, a.token, method, url, body());
      const sent = recording;
      recording = undefined;
      assert.equal(res.status, 200, res.raw);
      if (process.env.LIST_STATEMENTS)
        console.log(`--- ${dialect} ${method} ${url}: ${sent.length}\n${sent.join('\n')}`);
      return { res, sent };
    }

    test('W4: POST /users with 10 items', async () => {
      const { res, sent } = await statementsOf('POST', '/users', users);
      assert.equal(res.body.users.length, 10);
      assert.equal(sent.length, W4, sent.join('\n'));
    });

    test('W5: PATCH /jobs with 10 items', async () => {
      const { res, sent } = await statementsOf('PATCH', '/jobs', jobs);
      assert.equal(res.body.jobs.length, 10);
      assert.equal(sent.length, W5, sent.join('\n'));
    });

    test('W5 leaves the lists it did not set as they were, and sets those it names', async () => {
      const skill = await call(t.app, a.token, 'POST', '/skills', { skills: [{ name: 'Gas' }, { name: 'Cranes' }] });
      assert.equal(skill.status, 200, skill.raw);
      const [gas, cranes] = skill.body.skills.map((s: { id: number }) => s.id);
      const set = await call(t.app, a.token, 'PATCH', '/jobs', {
        jobs: [
          { id: jobIds[0], requiredSkills: [{ id: gas }] },
          { id: jobIds[1], requiredSkills: [{ id: cranes }] },
        ],
      });
      assert.equal(set.status, 200, set.raw);
      const since = Number((await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0].id);
      // Values of every kind through one UPDATE … FROM: numeric-looking text stays text, null clears.
      const res = await call(t.app, a.token, 'PATCH', '/jobs', {
        jobs: [
          { id: jobIds[0], orderNumber: '007', priority: 'urgent' },
          { id: jobIds[1], requiredSkills: [{ id: gas }], priority: 'low' },
          { id: jobIds[2], orderNumber: null, priority: 'high' },
        ],
      });
      assert.equal(res.status, 200, res.raw);
      const ids = (list: { id: number }[]) => list.map((x) => x.id);
      assert.deepEqual(ids(res.body.jobs[0].requiredSkills), [gas]);
      assert.deepEqual(ids(res.body.jobs[1].requiredSkills), [gas]);
      assert.deepEqual(ids(res.body.jobs[2].requiredSkills), []);
      assert.equal(res.body.jobs[0].orderNumber, '007');
      assert.equal(res.body.jobs[2].orderNumber, null);
      for (const [i, id] of jobIds.slice(0, 3).entries()) {
        const got = await call(t.app, a.token, 'GET', `/jobs/${id}`);
        assert.deepEqual(got.body.jobs[0], res.body.jobs[i]);
      }
      const events = (await call(t.app, a.token, 'GET', `/events?where=id > ${since}&sort=id`)).body.events;
      assert.equal(events.length, 3);
      assert.equal(events[0].changes.requiredSkills, undefined);
      assert.deepEqual(ids(events[0].data.requiredSkills), [gas]);
      assert.deepEqual(
        events[1].changes.requiredSkills.old.map((x: { id: number }) => x.id),
        [cranes],
      );
      assert.deepEqual(
        events[1].changes.requiredSkills.new.map((x: { id: number }) => x.id),
        [gas],
      );
      assert.deepEqual(events[0].changes.priority.new, 'urgent');
    });
  });
}
