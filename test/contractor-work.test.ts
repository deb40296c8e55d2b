import assert from 'node:assert/strict';
import fs from 'node:fs';
import { before, describe, test } from 'node:test';
import { f } from '../src/collections/machinery/fields.js';
import type { Collection } from '../src/collections/machinery/collection.js';
import { byTheirJob, byTheirUser, followsJob } from '../src/collections/policy.js';
import { registry } from '../src/collections/index.js';
import { addUser, suiteWithTenants, call, DIALECTS, errorsOf, skipUnless } from './helpers.js';

/**
 * PRODUCT §2 and §13: a Contractor reads and uploads the files of the jobs they can see, and reads
 * the events of their own work: visits assigned to them before or after a change, the jobs they can
 * see and those jobs' notes and files, their own user. Nothing else.
 */
test("a job's notes, charges and files follow the job; visits, timesheets and unrelated collections do not", () => {
  const names = registry.list.filter(followsJob).map((c) => c.name);
  assert.ok(names.includes('notes') && names.includes('files'));
  for (const n of ['visits', 'jobs', 'users', 'timesheets', 'sites', 'contacts']) assert.ok(!names.includes(n), n);
  // Following is what the declaration says: the 'own' scope byTheirJob over a job association.
  const job = f.assoc('job_id', 'jobs');
  const declared = (fields: object, own: unknown) => ({ name: 'x', fields, policy: { own } }) as unknown as Collection;
  assert.equal(followsJob(declared({ job }, byTheirJob)), true);
  assert.equal(followsJob(declared({ job }, byTheirUser)), false, 'own by their user, as timesheets');
  assert.equal(followsJob(declared({ job: f.assoc('job_id', 'clients') }, byTheirJob)), false);
  assert.equal(followsJob(declared({}, byTheirJob)), false);
});

for (const dialect of DIALECTS) {
  describe(`a Contractor's files and events (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let crew: { id: number; token: string };
    let office: { id: number; token: string };
    let mine: number; // a job with a visit assigned to crew
    let theirs: number; // a job crew cannot see
    let myVisit: number;
    let otherVisit: number;
    let since: number;

    const upload = (token: string, query: string, body = 'photo bytes') =>
      t.app.inject({
        method: 'POST',
        url: `/files/upload${query}`,
        payload: Buffer.from(body),
        headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': 'image/jpeg' },
      });
    const post = async (token: string, collection: string, item: Record<string, unknown>) => {
      const res = await call(t.app, token, 'POST', `/${collection}`, { [collection]: [item] });
      assert.equal(res.status, 200, res.raw);
      return res.body[collection][0].id as number;
    };
    const visit = (job: number, user: number | null) => ({
      job: { id: job },
      user: user === null ? null : { id: user },
      label: 'Fit boiler',
      startTime: '2026-12-01T09:00:00Z',
      endTime: '2026-12-01T11:00:00Z',
    });
    type Ev = { id: number; type: string; collection: string; item: { id: number } };
    const events = async (token: string, where = `id > ${since}`): Promise<Ev[]> => {
      const res = await call(t.app, token, 'GET', `/events?recordsPerPage=1000&where=${encodeURIComponent(where)}`);
      assert.equal(res.status, 200, res.raw);
      return res.body.events;
    };
    const keys = (evs: Ev[]) => new Set(evs.map((e) => `${e.collection}:${e.item.id}`));

    before(async () => {
      since = Number((await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0]?.id ?? 0);
      crew = await addUser(t, a, 'contractor');
      office = await addUser(t, a, 'employee');
      mine = await post(a.token, 'jobs', { title: 'Mine' });
      theirs = await post(a.token, 'jobs', { title: 'Theirs' });
      myVisit = await post(a.token, 'visits', visit(mine, crew.id));
      otherVisit = await post(a.token, 'visits', visit(theirs, office.id));
    });

    test('files: uploads only onto the jobs they can see; reads only those jobs’ files', async () => {
      const ok = await upload(crew.token, `?name=site.jpg&job=${mine}`);
      assert.equal(ok.statusCode, 200, ok.body);
      const myFile = ok.json().files[0];
      assert.deepEqual(myFile.job, { id: mine });
      assert.deepEqual(myFile.user, { id: crew.id });

      // Not attached, attached to a job they cannot see, or to another account's job: refused.
      const loose = await upload(crew.token, '?name=loose.jpg');
      assert.equal(loose.statusCode, 422);
      assert.deepEqual(errorsOf({ body: loose.json() }), ['1040:job']);
      const other = await upload(crew.token, `?name=x.jpg&job=${theirs}`);
      assert.equal(other.statusCode, 422);
      assert.deepEqual(errorsOf({ body: other.json() }), ['1045:job']);
      const foreignJob = await post(b.token, 'jobs', { title: 'Beta job' });
      assert.equal((await upload(crew.token, `?name=x.jpg&job=${foreignJob}`)).statusCode, 422);

      const officeFile = (await upload(a.token, `?name=office.pdf&job=${theirs}`)).json().files[0];
      const unattached = (await upload(a.token, '?name=policy.pdf')).json().files[0];
      const list = await call(t.app, crew.token, 'GET', '/files');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.files.map((x: { id: number }) => x.id),
        [myFile.id],
      );
      assert.equal((await call(t.app, crew.token, 'GET', `/files/${officeFile.id}`)).status, 404);
      assert.equal((await call(t.app, crew.token, 'GET', `/files/${unattached.id}`)).status, 404);
      const dl = await t.app.inject({
        method: 'GET',
        url: list.body.files[0].downloadUrl.replace(/^https?:\/\/[^/]+/, ''),
      });
      assert.equal(dl.body, 'photo bytes');

      // Moving their file off their jobs, or detaching it, is refused; renaming is fine.
      const moved = await call(t.app, crew.token, 'PATCH', `/files/${myFile.id}`, { files: [{ job: { id: theirs } }] });
      assert.equal(moved.status, 422);
      const detached = await call(t.app, crew.token, 'PATCH', `/files/${myFile.id}`, { files: [{ job: null }] });
      assert.equal(detached.status, 422);
      const renamed = await call(t.app, crew.token, 'PATCH', `/files/${myFile.id}`, { files: [{ name: 'after.jpg' }] });
      assert.equal(renamed.status, 200, renamed.raw);
      // Another file they cannot see looks missing to a write too.
      const touch = await call(t.app, crew.token, 'PATCH', `/files/${officeFile.id}`, {
        files: [{ name: 'mine now' }],
      });
      assert.notEqual(touch.status, 200);
    });

    test('writes on a job: one rule (policy onSeenJob) for notes, charges, visits and timesheets, per item of a batch', async () => {
      const notesBefore = (await call(t.app, a.token, 'GET', '/notes')).body.metadata.recordsCount;
      // A batch of three notes, the middle one on a job they cannot see: it alone fails, naming
      // job as missing, and nothing is written.
      const batch = await call(t.app, crew.token, 'POST', '/notes', {
        notes: [mine, theirs, mine].map((id) => ({ job: { id }, body: 'on site' })),
      });
      assert.equal(batch.status, 422, batch.raw);
      assert.deepEqual(batch.body.metadata.invalidItems, [1]);
      assert.deepEqual(errorsOf(batch), ['1045:job']);
      assert.equal((await call(t.app, a.token, 'GET', '/notes')).body.metadata.recordsCount, notesBefore);
      const charge = (job: number) => ({
        job: { id: job },
        kind: 'labour',
        description: 'Labour',
        unitPrice: 10,
        quantity: 1,
        stage: 'actual',
      });
      const charges = await call(t.app, crew.token, 'POST', '/charges', { charges: [charge(mine), charge(theirs)] });
      assert.deepEqual(errorsOf(charges), ['1045:job'], charges.raw);
      // A visit on their job is theirs to add (assigned to themself); one on another job is not.
      const visits = await call(t.app, crew.token, 'POST', '/visits', {
        visits: [visit(mine, crew.id), visit(theirs, crew.id)],
      });
      assert.deepEqual(visits.body.metadata?.invalidItems, [1], visits.raw);
      assert.deepEqual(errorsOf(visits), ['1045:job']);
      // A timesheet whose job is derived from a visit of another job: the derived job is checked.
      const entry = (extra: Record<string, unknown>) => ({
        startTime: '2026-11-02T09:00:00Z',
        endTime: '2026-11-02T10:00:00Z',
        ...extra,
      });
      const derived = await call(t.app, crew.token, 'POST', '/timesheets', {
        timesheets: [entry({ visit: { id: otherVisit } })],
      });
      assert.equal(derived.status, 422, derived.raw);
      assert.deepEqual(errorsOf(derived), ['1045:job']);
      const named = await call(t.app, crew.token, 'POST', '/timesheets', {
        timesheets: [entry({ job: { id: theirs } })],
      });
      assert.deepEqual(errorsOf(named), ['1045:job'], named.raw);
      const ok = await call(t.app, crew.token, 'POST', '/timesheets', {
        timesheets: [entry({ visit: { id: myVisit } })],
      });
      assert.equal(ok.status, 200, ok.raw);
      assert.equal(ok.body.timesheets[0].job.id, mine);
      // The office writes on any job of the account.
      assert.equal(
        (await call(t.app, office.token, 'POST', '/notes', { notes: [{ job: { id: theirs }, body: 'x' }] })).status,
        200,
      );
    });

    test('events: their visits, their jobs with notes and files, their own user; nothing else', async () => {
      const myNote = await post(a.token, 'notes', { job: { id: mine }, body: 'Gate code 1234' });
      const otherNote = await post(a.token, 'notes', { job: { id: theirs }, body: 'Not for crew' });
      await call(t.app, a.token, 'PATCH', `/users/${crew.id}`, { users: [{ firstName: 'Renamed' }] });
      await call(t.app, a.token, 'PATCH', `/users/${office.id}`, { users: [{ firstName: 'Other' }] });

      const seen = keys(await events(crew.token));
      for (const k of [`jobs:${mine}`, `visits:${myVisit}`, `notes:${myNote}`, `users:${crew.id}`])
        assert.ok(seen.has(k), k);
      for (const k of [
        `jobs:${theirs}`,
        `visits:${otherVisit}`,
        `notes:${otherNote}`,
        `users:${office.id}`,
        `users:${a.adminId}`,
      ])
        assert.ok(!seen.has(k), k);
      const files = (await events(crew.token)).filter((e) => e.collection === 'files');
      assert.ok(files.length >= 1);
      for (const e of files) {
        const file = await call(t.app, a.token, 'GET', `/files/${e.item.id}`);
        assert.deepEqual(file.body.files[0].job, { id: mine });
      }
      // An Administrator sees them all; `where` still applies to a Contractor.
      const all = keys(await events(a.token));
      assert.ok(all.has(`jobs:${theirs}`) && all.has(`notes:${otherNote}`));
      const onlyVisits = await events(crew.token, `id > ${since} and collection = "visits"`);
      assert.ok(onlyVisits.length > 0 && onlyVisits.every((e) => e.collection === 'visits'));
      // Without events.read on the token: 403; without notes.read: no note events.
      assert.equal((await call(t.app, await a.tokenFor(crew.id, ['jobs.read']), 'GET', '/events')).status, 403);
      const noNotes = await a.tokenFor(crew.id, ['events.read', 'jobs.read', 'visits.read']);
      assert.ok(!(await events(noNotes)).some((e) => e.collection === 'notes'));
      // Another account's Contractor sees none of it.
      const bCrew = await addUser(t, b, 'contractor');
      assert.equal((await events(bCrew.token, 'id > 0')).filter((e) => e.collection !== 'users').length, 0);
    });

    test('a visit reassigned away reaches them; the job then leaves their view', async () => {
      const before = Number((await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0].id);
      const moved = await call(t.app, a.token, 'PATCH', `/visits/${myVisit}`, {
        visits: [{ user: { id: office.id } }],
      });
      assert.equal(moved.status, 200, moved.raw);
      const got = await events(crew.token, `id > ${before}`);
      assert.deepEqual(
        got.map((e) => [e.type, e.item.id]),
        [['visits.updated', myVisit]],
      );
      // No visit of the job is theirs now: its events, and its notes', are no longer theirs.
      const now = keys(await events(crew.token));
      assert.ok(!now.has(`jobs:${mine}`));
      assert.ok(now.has(`visits:${myVisit}`)); // the events of a visit that was theirs stay
      assert.equal((await call(t.app, crew.token, 'GET', '/files')).body.files.length, 0);
      // Assigned back to them: the job is theirs again, history included.
      await call(t.app, a.token, 'PATCH', `/visits/${otherVisit}`, { visits: [{ user: { id: crew.id } }] });
      const again = keys(await events(crew.token));
      assert.ok(again.has(`jobs:${theirs}`) && again.has(`visits:${otherVisit}`));
    });
  });

  describe(`Contractors and files, as docs/files.md says (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a } = suiteWithTenants(dialect);
    let crew: { id: number; token: string };
    let office: { id: number; token: string };
    let mine: number;
    let theirs: number;
    const upload = (token: string, query: string) =>
      t.app.inject({
        method: 'POST',
        url: `/files/upload${query}`,
        payload: Buffer.from('bytes'),
        headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': 'application/pdf' },
      });
    before(async () => {
      crew = await addUser(t, a, 'contractor');
      office = await addUser(t, a, 'employee');
      const jobs = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Mine' }, { title: 'Theirs' }] }))
        .body.jobs;
      [mine, theirs] = [jobs[0].id, jobs[1].id];
      const v = await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: mine },
            user: { id: crew.id },
            label: 'Fit',
            startTime: '2026-12-01T09:00:00Z',
            endTime: '2026-12-01T11:00:00Z',
          },
        ],
      });
      assert.equal(v.status, 200, v.raw);
    });

    test('files as docs/files.md says: every file of the jobs they can see, whoever uploaded it; never a 403', async () => {
      const doc = fs.readFileSync(new URL('../../docs/files.md', import.meta.url), 'utf8');
      assert.doesNotMatch(doc, /Contractors have no access|Contractors[^.]*\(403\)/);
      assert.match(doc, /Contractors read and write\s+their own files/);
      assert.deepEqual(
        [registry.get('files')!.policy.read.contractor, registry.get('files')!.policy.write.contractor],
        ['own', 'own'],
      );
      const officeUp = async (name: string, job?: number) => {
        const res = await upload(office.token, `?name=${name}${job === undefined ? '' : `&job=${job}`}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().files[0].id as number;
      };
      const [renamed, hidden, removed, dropped, loose] = [
        await officeUp('r.pdf', mine),
        await officeUp('h.pdf', mine),
        await officeUp('d.pdf', mine),
        await officeUp('t.pdf', theirs),
        await officeUp('l.pdf'),
      ];
      // An Employee's upload on their job: they rename, logically delete and DELETE it.
      const patched = await call(t.app, crew.token, 'PATCH', `/files/${renamed}`, { files: [{ name: 'crew named' }] });
      assert.equal(patched.status, 200, patched.raw);
      const logical = await call(t.app, crew.token, 'PATCH', `/files/${hidden}`, { files: [{ deleted: true }] });
      assert.equal(logical.status, 200, logical.raw);
      assert.equal((await call(t.app, crew.token, 'DELETE', `/files/${removed}`)).status, 200);
      // Off their jobs: detaching is 1040, another job 1045; other files look missing (404, 1047), never 403.
      assert.deepEqual(
        errorsOf(await call(t.app, crew.token, 'PATCH', `/files/${renamed}`, { files: [{ job: null }] })),
        ['1040:job'],
      );
      assert.deepEqual(
        errorsOf(await call(t.app, crew.token, 'PATCH', `/files/${renamed}`, { files: [{ job: { id: theirs } }] })),
        ['1045:job'],
      );
      for (const id of [dropped, loose]) {
        assert.equal((await call(t.app, crew.token, 'GET', `/files/${id}`)).status, 404);
        for (const method of ['PATCH', 'DELETE']) {
          const res = await call(
            t.app,
            crew.token,
            method,
            `/files/${id}`,
            method === 'PATCH' ? { files: [{ name: 'x' }] } : undefined,
          );
          assert.deepEqual(errorsOf(res), ['1047:id'], res.raw);
        }
      }
      assert.equal((await call(t.app, a.token, 'GET', `/files/${dropped}`)).body.files[0].name, 't.pdf');
    });
  });
}
