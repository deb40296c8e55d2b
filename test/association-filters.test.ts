import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, skipUnless } from './helpers.js';

const idsOf = (res: { body: Record<string, { id: number }[]> }, collection: string) =>
  res.body[collection].map((x) => x.id);

for (const dialect of DIALECTS) {
  describe(`where and sort on association members (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let jones: number;
    let smith: number;
    let jobJones: number;
    let jobJones2: number;
    let jobSmith: number;
    let jobNone: number;
    before(async () => {
      const clients = await call(t.app, a.token, 'POST', '/clients', {
        clients: [{ name: 'Mrs JONES', email: 'j@example.com' }, { name: 'Smith Co' }],
      });
      [jones, smith] = idsOf(clients, 'clients');
      const jobs = await call(t.app, a.token, 'POST', '/jobs', {
        jobs: [
          { title: 'Fix roof', client: { id: jones } },
          { title: 'Paint door', client: { id: smith } },
          { title: 'No client' },
          { title: 'Gutter', client: { id: jones } },
        ],
      });
      [jobJones, jobSmith, jobNone, jobJones2] = idsOf(jobs, 'jobs');
      // Account B has a client of the same name and a job of it: never in A's answers.
      const bc = await call(t.app, b.token, 'POST', '/clients', { clients: [{ name: 'Jones' }] });
      await call(t.app, b.token, 'POST', '/jobs', {
        jobs: [{ title: 'B job', client: { id: bc.body.clients[0].id } }],
      });
    });
    const get = (url: string, token = a.token) => call(t.app, token, 'GET', url);

    it('filters on the associated item’s default fields, in the caller’s account only', async () => {
      const res = await get('/jobs?where=client.name ~ "jones"');
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(idsOf(res, 'jobs'), [jobJones, jobJones2]);
      assert.equal(res.body.metadata.recordsCount, 2);
      assert.deepEqual(idsOf(await get('/jobs?where=client.name = "Smith Co"'), 'jobs'), [jobSmith]);
      assert.deepEqual(idsOf(await get('/jobs?where=client.email = "j@example.com" and title ~ "roof"'), 'jobs'), [
        jobJones,
      ]);
      assert.deepEqual(idsOf(await get('/jobs?where=client.name ~ "smith" or title = "No client"'), 'jobs'), [
        jobSmith,
        jobNone,
      ]);
      // B's token finds its own only.
      const fromB = await get('/jobs?where=client.name ~ "jones"', b.token);
      assert.equal(fromB.body.jobs.length, 1);
      assert.equal(fromB.body.jobs[0].title, 'B job');
      // Members of tables behind every account, and of statuses.
      assert.equal((await get('/jobs?where=status.label = "New"')).body.jobs.length, 4);
      assert.equal((await get('/users?where=role.name = "Administrator"')).body.users.length, 1);
      assert.equal((await get('/jobs?where=account.companyName ~ "alpha"')).body.jobs.length, 4);
    });

    it('a null association matches no term on its members, != and !~ included', async () => {
      const ne = await get('/jobs?where=client.name != "Smith Co"');
      assert.deepEqual(idsOf(ne, 'jobs'), [jobJones, jobJones2]);
      const nl = await get('/jobs?where=client.name !~ "smith"');
      assert.deepEqual(idsOf(nl, 'jobs'), [jobJones, jobJones2]);
      assert.deepEqual(idsOf(await get('/jobs?where=client.companyName = null'), 'jobs'), [
        jobJones,
        jobSmith,
        jobJones2,
      ]);
      assert.deepEqual(idsOf(await get('/jobs?where=client.id = null'), 'jobs'), [jobNone]);
    });

    it('sorts on association members', async () => {
      const asc = await get('/jobs?sort=client.name,-id&where=client.id != null');
      assert.equal(asc.status, 200, asc.raw);
      assert.deepEqual(idsOf(asc, 'jobs'), [jobJones2, jobJones, jobSmith]);
      const desc = await get('/jobs?sort=-client.name,id&where=client.id != null');
      assert.deepEqual(idsOf(desc, 'jobs'), [jobSmith, jobJones, jobJones2]);
    });

    it('follows the target’s own changes (no stale remembered answer or count)', async () => {
      const before = await get('/jobs?where=client.name ~ "renamed"');
      assert.equal(before.body.metadata.recordsCount, 0);
      await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: smith, name: 'Renamed Smith' }] });
      const after = await get('/jobs?where=client.name ~ "renamed"');
      assert.deepEqual(idsOf(after, 'jobs'), [jobSmith]);
      assert.equal(after.body.metadata.recordsCount, 1);
      const sorted1 = await get('/jobs?sort=client.name&recordsPerPage=1&where=client.id != null');
      await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: smith, name: 'AAA first' }] });
      const sorted2 = await get('/jobs?sort=client.name&recordsPerPage=1&where=client.id != null');
      assert.notDeepEqual(idsOf(sorted1, 'jobs'), idsOf(sorted2, 'jobs'));
      assert.deepEqual(idsOf(sorted2, 'jobs'), [jobSmith]);
      await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: smith, name: 'Smith Co' }] });
    });

    it('refuses unknown and deeper members with 400', async () => {
      for (const where of [
        'client.nope = 1',
        'client.address.city = "x"',
        'client.address = "x"',
        'createdBy.login = "x"',
        'title.length = 1',
      ]) {
        const res = await get(`/jobs?where=${encodeURIComponent(where)}`);
        assert.equal(res.status, 400, `${where}: ${res.raw}`);
      }
      assert.equal((await get('/jobs?sort=client.nope')).status, 400);
      assert.equal((await get('/jobs?sort=client.address.city')).status, 400);
    });

    it('needs the target’s read permission and a role that reads it (403), and keeps the role’s scope', async () => {
      const con = await addUser(t, a, 'contractor', { lastName: 'Contractorson' });
      const other = await addUser(t, a, 'employee', { lastName: 'Otherson' });
      await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: jobJones },
            user: { id: con.id },
            label: 'Mine',
            startTime: '2030-01-01T09:00:00Z',
            endTime: '2030-01-01T10:00:00Z',
          },
          {
            job: { id: jobJones },
            user: { id: other.id },
            label: 'Theirs',
            startTime: '2030-01-01T09:00:00Z',
            endTime: '2030-01-01T10:00:00Z',
          },
        ],
      });
      // A Contractor reads no clients: client.* is 403, in where and in sort.
      const forbidden = await get('/jobs?where=client.name ~ "jones"', con.token);
      assert.equal(forbidden.status, 403, forbidden.raw);
      assert.equal((await get('/jobs?sort=client.name', con.token)).status, 403);
      // user.* is allowed, and is only ever themself.
      const mine = await get('/visits?where=user.lastName = "Contractorson"', con.token);
      assert.equal(mine.status, 200, mine.raw);
      assert.equal(mine.body.visits.length, 1);
      assert.equal(mine.body.visits[0].label, 'Mine');
      // The job's creator (the Administrator) is no user the Contractor reads: no match.
      const created = await get('/jobs?where=createdBy.firstName = "Ada"', con.token);
      assert.equal(created.status, 200, created.raw);
      assert.deepEqual(created.body.jobs, []);
      assert.equal((await get('/jobs?where=createdBy.firstName = "Ada"')).body.jobs.length, 4);
      // The office sees both visits by job title.
      const byJob = await get('/visits?where=job.title = "Fix roof"');
      assert.equal(byJob.body.visits.length, 2);
      // A token without clients.read cannot filter jobs by client.
      const narrow = await a.tokenFor(a.adminId, ['jobs.read']);
      const res = await get('/jobs?where=client.name ~ "jones"', narrow);
      assert.equal(res.status, 403, res.raw);
      assert.equal((await get('/jobs?where=title ~ "roof"', narrow)).status, 200);

      // `fields` asks the same gate as `where` (one access layer): a Contractor's job shows its
      // client as {id}; naming a client member is 403, as filtering on it is.
      const own = await get(`/jobs/${jobJones}?fields=client`, con.token);
      assert.equal(own.status, 200, own.raw);
      assert.deepEqual(own.body.jobs[0].client, { id: jones });
      assert.equal((await get(`/jobs/${jobJones}?fields=client.id`, con.token)).status, 200);
      for (const url of [`/jobs/${jobJones}?fields=client.name`, '/jobs?fields=title,client.name']) {
        const refused = await get(url, con.token);
        assert.equal(refused.status, 403, `${url}: ${refused.raw}`);
        assert.equal(refused.body.error.code, 1021, refused.raw);
        assert.doesNotMatch(refused.raw, /JONES/);
      }
      // `[*]` expands only what the caller may read: the client stays {id}, the visit's user (the
      // Contractor themself) is expanded.
      const all = await get(`/jobs/${jobJones}?fields=*,[*]`, con.token);
      assert.equal(all.status, 200, all.raw);
      assert.deepEqual(all.body.jobs[0].client, { id: jones });
      assert.doesNotMatch(all.raw, /JONES/);
      const visit = await get('/visits?fields=user.lastName,job.title', con.token);
      assert.equal(visit.status, 200, visit.raw);
      assert.deepEqual(
        visit.body.visits.map((v: { user: unknown; job: unknown }) => [v.user, v.job]),
        [
          [
            { id: con.id, lastName: 'Contractorson' },
            { id: jobJones, title: 'Fix roof' },
          ],
        ],
      );
      // The office's token without clients.read: 403 on a client member, 200 on the client's id.
      assert.equal((await get(`/jobs/${jobJones}?fields=client.name`, narrow)).status, 403);
      assert.equal((await get(`/jobs/${jobJones}?fields=client.name`)).body.jobs[0].client.name, 'Mrs JONES');
      // An expanded item outside the role's scope stays {id}: the job's creator is no user a
      // Contractor reads.
      const creator = await get(`/jobs/${jobJones}?fields=createdBy.firstName`, con.token);
      assert.equal(creator.status, 200, creator.raw);
      assert.deepEqual(Object.keys(creator.body.jobs[0].createdBy), ['id']);
    });
  });
}
