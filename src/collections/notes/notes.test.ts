import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DIALECTS,
  addUser,
  assertAtomicBatch,
  assertIsolated,
  call,
  suiteWithTenants,
  errorsOf,
  skipUnless,
} from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;
const ids = (items: { id: number }[]) => items.map((i) => i.id);

for (const dialect of DIALECTS) {
  describe(`notes (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let jobA: number;
    let jobB: number;
    before(async () => {
      jobA = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'A job' }] })).body.jobs[0].id;
      jobB = (await call(t.app, b.token, 'POST', '/jobs', { jobs: [{ title: 'B job' }] })).body.jobs[0].id;
    });

    const note = (extra: Record<string, unknown> = {}) => ({ job: { id: jobA }, body: 'Gate code 1234', ...extra });
    const create = (items: unknown[], token = a.token) => call(t.app, token, 'POST', '/notes', { notes: items });
    const patch = (items: unknown[], token = a.token) => call(t.app, token, 'PATCH', '/notes', { notes: items });
    const newJob = async (title: string) =>
      (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title }] })).body.jobs[0].id as number;

    it('creates, reads, lists, patches and deletes; the default fields are exactly these', async () => {
      const res = await create([note()]);
      assert.equal(res.status, 200, res.raw);
      const n = res.body.notes[0];
      assert.deepEqual(Object.keys(n).sort(), [
        'account',
        'author',
        'body',
        'created',
        'deleted',
        'id',
        'job',
        'modified',
      ]);
      assert.deepEqual(
        { ...n, created: undefined, modified: undefined },
        {
          id: n.id,
          job: { id: jobA },
          body: 'Gate code 1234',
          author: { id: a.adminId },
          account: { id: a.accountId },
          deleted: false,
          created: undefined,
          modified: undefined,
        },
      );
      assert.ok(
        !Number.isNaN(Date.parse(n.created)) && !Number.isNaN(Date.parse(n.modified)),
        `${n.created} ${n.modified}`,
      );
      assert.match(n.created, /(Z|[+-]\d\d:\d\d)$/);

      const got = await call(t.app, a.token, 'GET', `/notes/${n.id}`);
      assert.equal(got.status, 200, got.raw);
      assert.deepEqual(got.body.notes, [n]);
      const listed = await call(t.app, a.token, 'GET', '/notes');
      assert.ok(ids(listed.body.notes).includes(n.id));

      const p = await patch([{ id: n.id, body: 'Gate code 4321', deleted: true }]);
      assert.equal(p.status, 200, p.raw);
      assert.deepEqual(
        [p.body.notes[0].body, p.body.notes[0].deleted, p.body.notes[0].author],
        ['Gate code 4321', true, { id: a.adminId }],
      );
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${n.id}`)).body.notes[0].body, 'Gate code 4321');

      assert.deepEqual((await call(t.app, a.token, 'DELETE', `/notes/${n.id}`)).body.notes, [{ id: n.id }]);
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${n.id}`)).status, 404);
      assert.ok(!ids((await call(t.app, a.token, 'GET', '/notes')).body.notes).includes(n.id));
    });

    it('sets the author to the caller; author is read-only on create and on PATCH', async () => {
      const emp = await addUser(t, a, 'employee');
      const n = (await create([note()], emp.token)).body.notes[0];
      assert.deepEqual(n.author, { id: emp.id });
      assert.deepEqual(errorsOf(await create([note({ author: { id: emp.id } })])), [code('readOnly', 'author')]);
      assert.deepEqual(errorsOf(await patch([{ id: n.id, author: { id: a.adminId } }])), [code('readOnly', 'author')]);
      // Another user editing the note does not make them its author.
      const p = await patch([{ id: n.id, body: 'Edited by the office' }]);
      assert.equal(p.status, 200, p.raw);
      assert.deepEqual(p.body.notes[0].author, { id: emp.id });
    });

    it('expands job and author with fields=*,[*]', async () => {
      const n = (await create([note()])).body.notes[0];
      const job = (await call(t.app, a.token, 'GET', `/jobs/${jobA}`)).body.jobs[0];
      const full = await call(t.app, a.token, 'GET', `/notes/${n.id}?fields=*,[*]`);
      assert.equal(full.status, 200, full.raw);
      assert.deepEqual(full.body.notes[0].job, { id: jobA, title: 'A job', reference: job.reference });
      assert.deepEqual(full.body.notes[0].author, { id: a.adminId, firstName: 'Ada', lastName: 'Admin' });
      assert.equal(full.body.notes[0].body, 'Gate code 1234');
    });

    it('requires job and body, one error each, naming the field', async () => {
      assert.deepEqual(errorsOf(await create([{}])).sort(), [code('required', 'body'), code('required', 'job')]);
      assert.deepEqual(errorsOf(await create([{ body: 'x' }])), [code('required', 'job')]);
      assert.deepEqual(errorsOf(await create([{ job: { id: jobA } }])), [code('required', 'body')]);
    });

    it('wants a body of 1 to 10,000 characters', async () => {
      assert.deepEqual(errorsOf(await create([note({ body: '' })])), [code('invalid', 'body')]);
      const max = await create([note({ body: 'x'.repeat(10_000) })]);
      assert.equal(max.status, 200, max.raw.slice(0, 500));
      assert.equal(
        (await call(t.app, a.token, 'GET', `/notes/${max.body.notes[0].id}`)).body.notes[0].body.length,
        10_000,
      );
      assert.deepEqual(errorsOf(await create([note({ body: 'x'.repeat(10_001) })])), [code('invalid', 'body')]);
      const n = max.body.notes[0];
      assert.deepEqual(errorsOf(await patch([{ id: n.id, body: '' }])), [code('invalid', 'body')]);
      assert.deepEqual(errorsOf(await patch([{ id: n.id, body: 'y'.repeat(10_001) }])), [code('invalid', 'body')]);
      assert.deepEqual(errorsOf(await create([note({ body: 5 })])), [code('invalid', 'body')]);
      assert.deepEqual(errorsOf(await create([note({ body: null })])), [code('invalid', 'body')]);
    });

    it('refuses unknown and read-only members and malformed associations', async () => {
      const res = await create([note({ id: 9, created: '2020-01-01T00:00:00Z', title: 'x' })]);
      assert.deepEqual(errorsOf(res).sort(), [
        code('readOnly', 'created'),
        code('readOnly', 'id'),
        code('unknown', 'title'),
      ]);
      assert.deepEqual(errorsOf(await create([note({ job: jobA })])), [code('association', 'job')]);
      assert.deepEqual(errorsOf(await create([note({ job: null })])).length, 1);
    });

    it("references only the account's jobs, and not a logically deleted one", async () => {
      assert.deepEqual(errorsOf(await create([note({ job: { id: jobB } })])), [code('reference', 'job')]);
      assert.deepEqual(errorsOf(await create([note({ job: { id: 999_999 } })])), [code('reference', 'job')]);
      const gone = await newJob('Cancelled job');
      const n = (await create([note({ job: { id: gone } })])).body.notes[0];
      const d = await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: gone, deleted: true }] });
      assert.equal(d.status, 200, d.raw);
      assert.deepEqual(errorsOf(await create([note({ job: { id: gone } })])), [code('reference', 'job')]);
      const other = (await create([note()])).body.notes[0];
      assert.deepEqual(errorsOf(await patch([{ id: other.id, job: { id: gone } }])), [code('reference', 'job')]);
      assert.deepEqual(errorsOf(await patch([{ id: other.id, job: { id: jobB } }])), [code('reference', 'job')]);
      // The note already on it stays readable.
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${n.id}`)).status, 200);
    });

    it('filters and sorts on body', async () => {
      const [n1, n2] = (
        await create([
          note({ body: 'Zebra crossing near the SIDE door' }),
          note({ body: 'Apple tree by the side gate' }),
        ])
      ).body.notes;
      let res = await call(t.app, a.token, 'GET', '/notes?where=body~"side"&sort=body&fields=body');
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.notes, [
        { id: n2.id, body: n2.body },
        { id: n1.id, body: n1.body },
      ]);
      res = await call(t.app, a.token, 'GET', '/notes?where=body~"side"&sort=-body&fields=body');
      assert.deepEqual(ids(res.body.notes), [n1.id, n2.id]);
      res = await call(t.app, a.token, 'GET', `/notes?where=body="Apple tree by the side gate"+and+job.id=${jobA}`);
      assert.deepEqual(ids(res.body.notes), [n2.id]);
      res = await call(
        t.app,
        a.token,
        'GET',
        `/notes?where=body~"zebra"+and+author.id=${a.adminId}&fields=author.firstName`,
      );
      assert.deepEqual(res.body.notes, [{ id: n1.id, author: { id: a.adminId, firstName: 'Ada' } }]);
    });

    it('applies a batch all or nothing', async () => {
      await assertAtomicBatch(t, a, 'notes', note({ body: 'Batch good' }), note({ body: '' }));
      const res = await call(t.app, a.token, 'GET', '/notes?where=body="Batch good"');
      assert.deepEqual(res.body.notes, []);
    });

    it("isolates accounts: A cannot see or change B's notes", async () => {
      const n = (await create([{ job: { id: jobB }, body: 'B only' }], b.token)).body.notes[0];
      await assertIsolated(t, a, b, 'notes', n.id, { body: 'Stolen' });
      assert.ok(!ids((await call(t.app, a.token, 'GET', '/notes')).body.notes).includes(n.id));
    });

    it('lets Employees read and write all notes, whoever wrote them', async () => {
      const emp = await addUser(t, a, 'employee');
      const byAdmin = (await create([note({ body: 'By admin' })])).body.notes[0];
      const listed = await call(t.app, emp.token, 'GET', '/notes');
      assert.equal(listed.status, 200, listed.raw);
      assert.ok(ids(listed.body.notes).includes(byAdmin.id));
      const mine = await create([note({ body: 'By employee' })], emp.token);
      assert.equal(mine.status, 200, mine.raw);
      const p = await patch([{ id: byAdmin.id, body: 'Employee edit' }], emp.token);
      assert.equal(p.status, 200, p.raw);
      assert.deepEqual([p.body.notes[0].body, p.body.notes[0].author], ['Employee edit', { id: a.adminId }]);
      assert.equal((await call(t.app, emp.token, 'DELETE', `/notes/${byAdmin.id}`)).status, 200);
      assert.equal((await call(t.app, emp.token, 'DELETE', `/notes/${mine.body.notes[0].id}`)).status, 200);
    });

    it('lets a Contractor read and write the notes of their jobs only, and change only their own', async () => {
      const con = await addUser(t, a, 'contractor');
      const emp = await addUser(t, a, 'employee');
      const theirs = await newJob('Theirs');
      const notTheirs = await newJob('Not theirs');
      const v = await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: theirs },
            user: { id: con.id },
            label: 'Fix',
            startTime: '2030-01-01T09:00:00Z',
            endTime: '2030-01-01T10:00:00Z',
          },
          {
            job: { id: notTheirs },
            user: { id: emp.id },
            label: 'Other',
            startTime: '2030-01-01T09:00:00Z',
            endTime: '2030-01-01T10:00:00Z',
          },
        ],
      });
      assert.equal(v.status, 200, v.raw);
      const [onTheirs, onNotTheirs] = (
        await create([
          note({ job: { id: theirs }, body: 'Office note' }),
          note({ job: { id: notTheirs }, body: 'Hidden' }),
        ])
      ).body.notes;

      // Reading: exactly the notes of their jobs.
      let listed = await call(t.app, con.token, 'GET', '/notes');
      assert.equal(listed.status, 200, listed.raw);
      assert.deepEqual(ids(listed.body.notes), [onTheirs.id]);
      assert.equal(listed.body.metadata.recordsCount, 1);
      assert.equal((await call(t.app, con.token, 'GET', `/notes/${onTheirs.id}`)).status, 200);
      assert.equal((await call(t.app, con.token, 'GET', `/notes/${onNotTheirs.id}`)).status, 404);

      // Writing: only on their jobs.
      const own = await create([note({ job: { id: theirs }, body: 'Contractor note' })], con.token);
      assert.equal(own.status, 200, own.raw);
      const mine = own.body.notes[0];
      assert.deepEqual(mine.author, { id: con.id });
      assert.deepEqual(errorsOf(await create([note({ job: { id: notTheirs }, body: 'Sneaky' })], con.token)), [
        code('reference', 'job'),
      ]);
      assert.deepEqual(errorsOf(await create([note({ job: { id: jobA }, body: 'Sneaky' })], con.token)), [
        code('reference', 'job'),
      ]);

      listed = await call(t.app, con.token, 'GET', '/notes?sort=id');
      assert.deepEqual(ids(listed.body.notes), [onTheirs.id, mine.id]);

      // Changing: their own note, not someone else's on the same job, nor one they cannot see.
      const p = await patch([{ id: mine.id, body: 'Contractor note, edited' }], con.token);
      assert.equal(p.status, 200, p.raw);
      assert.equal(p.body.notes[0].body, 'Contractor note, edited');
      assert.deepEqual(errorsOf(await patch([{ id: mine.id, job: { id: notTheirs } }], con.token)), [
        code('reference', 'job'),
      ]);
      assert.equal((await patch([{ id: onTheirs.id, body: 'Overwritten' }], con.token)).status, 403);
      assert.equal((await call(t.app, con.token, 'DELETE', `/notes/${onTheirs.id}`)).status, 403);
      assert.deepEqual(errorsOf(await patch([{ id: onNotTheirs.id, body: 'Overwritten' }], con.token)), [
        code('notFound', 'id'),
      ]);
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${onTheirs.id}`)).body.notes[0].body, 'Office note');
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${onNotTheirs.id}`)).body.notes[0].body, 'Hidden');

      // The office still sees and edits the contractor's note.
      assert.equal((await patch([{ id: mine.id, body: 'Checked' }], emp.token)).status, 200);
      assert.equal((await call(t.app, con.token, 'DELETE', `/notes/${mine.id}`)).status, 200);
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${mine.id}`)).status, 404);
    });

    it('removes the notes of a deleted job', async () => {
      const job = await newJob('Short-lived');
      const [n1, n2] = (await create([note({ job: { id: job } }), note({ job: { id: job }, body: 'Second' })])).body
        .notes;
      const keep = (await create([note()])).body.notes[0];
      const before = (await call(t.app, a.token, 'GET', '/notes')).body.metadata.recordsCount as number;
      const d = await call(t.app, a.token, 'DELETE', `/jobs/${job}`);
      assert.equal(d.status, 200, d.raw);
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${n1.id}`)).status, 404);
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${n2.id}`)).status, 404);
      assert.equal((await call(t.app, a.token, 'GET', `/notes/${keep.id}`)).status, 200);
      const list = await call(t.app, a.token, 'GET', '/notes');
      assert.equal(list.body.metadata.recordsCount, before - 2);
      assert.ok(!ids(list.body.notes).some((id) => id === n1.id || id === n2.id));
    });

    it('keeps the note with author null when its author is deleted', async () => {
      const emp = await addUser(t, a, 'employee');
      const n = (await create([note({ body: 'Written by a leaver' })], emp.token)).body.notes[0];
      assert.deepEqual(n.author, { id: emp.id });
      const d = await call(t.app, a.token, 'DELETE', `/users/${emp.id}`);
      assert.equal(d.status, 200, d.raw);
      const got = await call(t.app, a.token, 'GET', `/notes/${n.id}?fields=*,[*]`);
      assert.equal(got.status, 200, got.raw);
      assert.equal(got.body.notes[0].author, null);
      assert.equal(got.body.notes[0].body, 'Written by a leaver');
      const byAuthor = await call(t.app, a.token, 'GET', '/notes?where=author.id=null&fields=author');
      assert.equal(byAuthor.status, 200, byAuthor.raw);
      assert.ok(ids(byAuthor.body.notes).includes(n.id));
      assert.ok(
        byAuthor.body.notes.every((x: { author: unknown }) => x.author === null),
        byAuthor.raw,
      );
    });
  });
}
