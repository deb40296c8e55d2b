import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { DIALECTS, addUser, canonicalByHand, suiteWithTenants, call, errorsOf, skipUnless } from './helpers.js';
import { VALIDATION } from '../src/errors.js';

/**
 * PRODUCT §17 (issue 47): form templates, submissions checked against them (every answer type's
 * edges, files by their bytes), immutable, with a sha256 recomputed here independently; files a
 * submission names kept; the completion rule on jobs; a Contractor on the jobs they can see.
 */
const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;
const image = (format: 'png' | 'jpeg', w = 8, h = 6) => {
  const made = sharp({ create: { width: w, height: h, channels: 3, background: '#3366aa' } });
  return (format === 'png' ? made.png() : made.jpeg()).toBuffer();
};

const FIELDS = [
  { key: 'notes', label: 'Notes', type: 'text' },
  { key: 'pressure', label: 'Pressure (mbar)', type: 'number', required: true },
  { key: 'safe', label: 'Safe to use', type: 'boolean', required: true },
  { key: 'nextService', label: 'Next service', type: 'date' },
  { key: 'outcome', label: 'Outcome', type: 'select', options: ['pass', 'fail'] },
  { key: 'checks', label: 'Checks', type: 'multiSelect', options: ['flue', 'seals', 'vent'] },
  { key: 'photos', label: 'Photos', type: 'photo' },
  { key: 'signature', label: 'Customer signature', type: 'signature', required: true },
];

for (const dialect of DIALECTS) {
  describe(`forms, checklists and signatures (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let job: number;
    let otherJob: number;
    let template: number;
    let photo: number;
    let sig: number;
    before(async () => {
      job = await newJob('Boiler service');
      otherJob = await newJob('Other job');
      template = (await post('formTemplates', [{ name: 'Gas safety', fields: FIELDS }])).body.formTemplates[0].id;
      photo = await upload(await image('jpeg', 40, 30), 'boiler.jpg', 'image/jpeg', job);
      sig = await upload(await image('png'), 'signature.png', 'image/png', job);
    });

    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    async function newJob(title: string, token = a.token): Promise<number> {
      const res = await post('jobs', [{ title }], token);
      assert.equal(res.status, 200, res.raw);
      return res.body.jobs[0].id;
    }
    async function upload(bytes: Buffer, name: string, type: string, jobId: number | null, token = a.token) {
      const q = jobId === null ? '' : `&job=${jobId}`;
      const res = await t.app.inject({
        method: 'POST',
        url: `/files/upload?name=${encodeURIComponent(name)}${q}`,
        payload: bytes,
        headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', 'content-type': type },
      });
      assert.equal(res.statusCode, 200, res.body);
      return JSON.parse(res.body).files[0].id as number;
    }
    const TIMES = { startTime: '2030-01-01T09:00:00Z', endTime: '2030-01-01T11:00:00Z' };
    const good = (extra: Record<string, unknown> = {}) => ({
      pressure: 20.5,
      safe: true,
      signature: { file: { id: sig }, name: 'Jane Customer' },
      ...extra,
    });
    const submit = (answers: unknown, extra: Record<string, unknown> = {}, token = a.token) =>
      post('formSubmissions', [{ template: { id: template }, job: { id: job }, answers, ...extra }], token);

    it('templates: fields stored with `required` explicit; version moves only when fields change', async () => {
      const res = await post('formTemplates', [
        { name: 'Checklist', fields: [{ key: 'a', label: 'A', type: 'boolean' }] },
      ]);
      assert.equal(res.status, 200, res.raw);
      const tpl = res.body.formTemplates[0];
      assert.deepEqual(
        [tpl.version, tpl.requiredToComplete, tpl.fields],
        [1, false, [{ key: 'a', label: 'A', type: 'boolean', required: false }]],
      );
      const patch = (items: unknown[], token = a.token) =>
        call(t.app, token, 'PATCH', '/formTemplates', { formTemplates: items });
      const renamed = await patch([{ id: tpl.id, name: 'Renamed', fields: tpl.fields }]);
      assert.equal(renamed.body.formTemplates[0].version, 1, 'the same fields again are no change');
      const changed = await patch([
        { id: tpl.id, fields: [{ key: 'a', label: 'A', type: 'boolean', required: true }] },
      ]);
      assert.equal(changed.body.formTemplates[0].version, 2);
      assert.deepEqual(errorsOf(await patch([{ id: tpl.id, version: 7 }])), [code('readOnly', 'version')]);
      const emp = await addUser(t, a, 'employee');
      const crew = await addUser(t, a, 'contractor');
      assert.equal((await post('formTemplates', [{ name: 'x', fields: tpl.fields }], emp.token)).status, 403);
      assert.equal((await call(t.app, crew.token, 'GET', `/formTemplates/${tpl.id}`)).status, 200);
      assert.equal((await call(t.app, b.token, 'GET', `/formTemplates/${tpl.id}`)).status, 404);
    });

    it('templates: 201 fields, bad keys, duplicate keys and option rules fail naming the member', async () => {
      const many = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `f${i}`, label: `F${i}`, type: 'text' }));
      assert.equal((await post('formTemplates', [{ name: 'Max', fields: many(200) }])).status, 200);
      assert.deepEqual(errorsOf(await post('formTemplates', [{ name: 'Big', fields: many(201) }])), [
        code('invalid', 'fields'),
      ]);
      assert.deepEqual(errorsOf(await post('formTemplates', [{ name: 'None', fields: [] }])), [
        code('invalid', 'fields'),
      ]);
      const one = (field: unknown) => post('formTemplates', [{ name: 'One', fields: [field] }]);
      for (const key of ['Upper', '1abc', 'a-b', 'a'.repeat(41), '', 7])
        assert.deepEqual(
          errorsOf(await one({ key, label: 'L', type: 'text' })),
          [code('invalid', 'fields[0].key')],
          String(key),
        );
      assert.deepEqual(errorsOf(await one({ key: 'a'.repeat(40), label: 'L', type: 'text' })), []);
      assert.deepEqual(
        errorsOf(
          await post('formTemplates', [
            {
              name: 'Dup',
              fields: [
                { key: 'a', label: 'A', type: 'text' },
                { key: 'a', label: 'B', type: 'number' },
              ],
            },
          ]),
        ),
        [code('duplicate', 'fields[1].key')],
      );
      assert.deepEqual(errorsOf(await one({ key: 's', label: 'S', type: 'select' })), [
        code('required', 'fields[0].options'),
      ]);
      assert.deepEqual(errorsOf(await one({ key: 's', label: 'S', type: 'select', options: ['x', 'x'] })), [
        code('invalid', 'fields[0].options'),
      ]);
      assert.deepEqual(errorsOf(await one({ key: 's', label: 'S', type: 'select', options: [] })), [
        code('invalid', 'fields[0].options'),
      ]);
      assert.deepEqual(
        errorsOf(
          await one({
            key: 's',
            label: 'S',
            type: 'multiSelect',
            options: Array.from({ length: 101 }, (_, i) => `o${i}`),
          }),
        ),
        [code('invalid', 'fields[0].options')],
      );
      assert.deepEqual(errorsOf(await one({ key: 't', label: 'T', type: 'text', options: ['x'] })), [
        code('invalid', 'fields[0].options'),
      ]);
      assert.deepEqual(errorsOf(await one({ key: 't', label: 'T', type: 'colour' })), [
        code('invalid', 'fields[0].type'),
      ]);
      assert.deepEqual(errorsOf(await one({ key: 't', type: 'text', extra: 1 })), [
        code('unknown', 'fields[0].extra'),
        code('required', 'fields[0].label'),
      ]);
      assert.deepEqual(errorsOf(await one({ key: 't', label: 'T', type: 'text', required: 'yes' })), [
        code('invalid', 'fields[0].required'),
      ]);
    });

    it('a submission: read-only members, and a sha256 anyone can recompute', async () => {
      const res = await submit(
        good({
          notes: 'Flue clear; Ünïcode ✓',
          nextService: '2027-02-28',
          outcome: 'pass',
          checks: ['vent', 'flue'],
          photos: [{ id: photo }],
          photosEmpty: undefined,
        }),
        { location: { lat: 51.5, lng: -0.12, accuracy: 8 } },
      );
      assert.equal(res.status, 200, res.raw);
      const s = res.body.formSubmissions[0];
      assert.deepEqual(
        [s.templateVersion, s.submittedBy, s.visit, s.supersedes, s.job, s.template],
        [1, { id: a.adminId }, null, null, { id: job }, { id: template }],
      );
      assert.match(s.submitted, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const files = (
        await call(t.app, a.token, 'GET', `/files?where=${encodeURIComponent(`job.id=${job}`)}&fields=sha256`)
      ).body.files as { id: number; sha256: string }[];
      const digest = (id: number) => files.find((f) => f.id === id)!.sha256;
      const hashed = {
        template,
        templateVersion: 1,
        job,
        visit: null,
        answers: {
          ...s.answers,
          photos: [digest(photo)],
          signature: { file: digest(sig), name: 'Jane Customer' },
        },
        submittedBy: a.adminId,
        submitted: s.submitted,
      };
      // Numbers other than integers written the way ES and RFC 8785 agree (20.5).
      const canonical = canonicalByHand(hashed);
      assert.ok(
        canonical.startsWith('{"answers":{"checks":["vent","flue"],"nextService":"2027-02-28","notes":'),
        canonical,
      );
      assert.equal(s.sha256, createHash('sha256').update(canonical, 'utf8').digest('hex'));
      assert.equal(
        (await call(t.app, a.token, 'GET', `/formSubmissions/${s.id}`)).body.formSubmissions[0].sha256,
        s.sha256,
      );
    });

    it('every answer type refuses its edges, naming answers.<key>; required empties are 1040', async () => {
      const fails = async (answers: unknown, expected: string[]) =>
        assert.deepEqual(errorsOf(await submit(answers)), expected, JSON.stringify(answers).slice(0, 200));
      await fails(good({ notes: 'x'.repeat(10_001) }), [code('invalid', 'answers.notes')]);
      assert.equal((await submit(good({ notes: 'x'.repeat(10_000) }))).status, 200);
      await fails(good({ notes: 5 }), [code('invalid', 'answers.notes')]);
      await fails(good({ pressure: '20' }), [code('invalid', 'answers.pressure')]);
      await fails(good({ safe: 'true' }), [code('invalid', 'answers.safe')]);
      await fails(good({ nextService: '2026-02-30' }), [code('invalid', 'answers.nextService')]);
      await fails(good({ nextService: '2026-2-3' }), [code('invalid', 'answers.nextService')]);
      await fails(good({ outcome: 'maybe' }), [code('invalid', 'answers.outcome')]);
      await fails(good({ checks: ['flue', 'flue'] }), [code('invalid', 'answers.checks')]);
      await fails(good({ checks: ['roof'] }), [code('invalid', 'answers.checks')]);
      await fails(good({ checks: 'flue' }), [code('invalid', 'answers.checks')]);
      await fails(good({ colour: 'red' }), [code('unknown', 'answers.colour')]);
      for (const empty of [null, '', []]) await fails(good({ safe: empty }), [code('required', 'answers.safe')]);
      await fails({ pressure: 1, safe: false }, [code('required', 'answers.signature')]);
      await fails([1, 2], [code('invalid', 'answers')]);
      // An empty array on an optional photo is no answer.
      const none = await submit(good({ photos: [] }));
      assert.equal(none.status, 200, none.raw);
      assert.equal('photos' in none.body.formSubmissions[0].answers, false);
      // A non-finite number: 1e400 parses to Infinity.
      const raw = JSON.stringify({
        formSubmissions: [{ template: { id: template }, job: { id: job }, answers: good({ pressure: 12345 }) }],
      }).replace('12345', '1e400');
      const inf = await call(t.app, a.token, 'POST', '/formSubmissions', raw);
      assert.deepEqual(errorsOf(inf), [code('invalid', 'answers.pressure')], inf.raw);
    });

    it('hostile answers: deep nesting is a 400 on the body; a huge answers object fails naming each key; never 5xx', async () => {
      // 100,000 levels of arrays in a text answer (200 KB, under the 1 MiB body limit).
      const deep = JSON.stringify({
        formSubmissions: [{ template: { id: template }, job: { id: job }, answers: good({ notes: 'DEEP' }) }],
      }).replace('"DEEP"', '['.repeat(100_000) + ']'.repeat(100_000));
      const nested = await call(t.app, a.token, 'POST', '/formSubmissions', deep);
      // The API's JSON parser refuses the body (more than 64 levels), before any collection sees it.
      assert.deepEqual([nested.status, nested.body.error?.code], [400, 1001], nested.raw.slice(0, 300));
      assert.match(nested.body.error.message, /nested deeper than 64 levels/);
      assert.doesNotMatch(nested.raw, /RangeError|stack|at \w+ \(/);
      // 40,000 unknown keys: refused, each failure naming its key, nothing stored.
      const many = Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, i]));
      const huge = await submit(good(many));
      assert.ok(huge.status >= 400 && huge.status < 500, huge.raw.slice(0, 300));
      const errors = errorsOf(huge);
      assert.ok(
        errors.length >= 1 &&
          errors.every((e) => e === code('unknown', e.split(':')[1]) && /^answers\.k\d+$/.test(e.split(':')[1])),
        errors.slice(0, 3).join(),
      );
    });

    it('photos are image files of the same job by their bytes; a signature is a PNG file', async () => {
      const fails = async (answers: unknown, field: string) =>
        assert.deepEqual(errorsOf(await submit(answers)), [code('invalid', field)]);
      const elsewhere = await upload(await image('jpeg'), 'other.jpg', 'image/jpeg', otherJob);
      const loose = await upload(await image('jpeg'), 'loose.jpg', 'image/jpeg', null);
      const fake = await upload(Buffer.from('%PDF-1.7 not an image'), 'fake.jpg', 'image/jpeg', job);
      const pdf = await upload(await image('png'), 'typed.pdf', 'application/pdf', job);
      const jpegAsPng = await upload(await image('jpeg'), 'sig.png', 'image/png', job);
      const pngAsJpeg = await upload(await image('png'), 'sig.jpg', 'image/jpeg', job);
      const bFile = await upload(await image('jpeg'), 'b.jpg', 'image/jpeg', null, b.token);
      for (const id of [elsewhere, loose, fake, pdf, bFile]) await fails(good({ photos: [{ id }] }), 'answers.photos');
      await fails(good({ photos: [{ id: photo }, { id: photo }] }), 'answers.photos');
      await fails(good({ photos: Array.from({ length: 21 }, () => ({ id: photo })) }), 'answers.photos');
      await fails(good({ photos: [photo] }), 'answers.photos');
      for (const id of [jpegAsPng, pngAsJpeg, photo, elsewhere])
        await fails(good({ signature: { file: { id }, name: 'Jane' } }), 'answers.signature');
      await fails(good({ signature: { file: { id: sig }, name: '' } }), 'answers.signature');
      await fails(good({ signature: { file: { id: sig } } }), 'answers.signature');
      await fails(good({ signature: { file: { id: sig }, name: 'J', at: 1 } }), 'answers.signature');
      // A PNG is an image too, for a photo.
      assert.equal((await submit(good({ photos: [{ id: sig }] }))).status, 200);
    });

    it('submissions never change; the files they name are neither changed nor deleted', async () => {
      const mine = await upload(await image('png'), 'kept.png', 'image/png', job);
      const s = (await submit(good({ photos: [{ id: mine }] }))).body.formSubmissions[0];
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/formSubmissions/${s.id}`, { formSubmissions: [{ answers: {} }] }))
          .status,
        405,
      );
      assert.equal((await call(t.app, a.token, 'DELETE', `/formSubmissions/${s.id}`)).status, 405);
      const del = await call(t.app, a.token, 'DELETE', `/files/${mine}`);
      assert.equal(del.status, 422, del.raw);
      assert.deepEqual(errorsOf(del), [code('inUse', 'id')]);
      const moved = await call(t.app, a.token, 'PATCH', '/files', { files: [{ id: mine, job: { id: otherJob } }] });
      assert.deepEqual(errorsOf(moved), [code('conflict', 'id')]);
      const renamed = await call(t.app, a.token, 'PATCH', '/files', { files: [{ id: mine, name: 'x.png' }] });
      assert.equal(renamed.status, 422);
      // A template with submissions is kept (mark it deleted instead); one without is deleted.
      const kept = await call(t.app, a.token, 'DELETE', `/formTemplates/${template}`);
      assert.equal(kept.status, 422, kept.raw);
      const unused = (
        await post('formTemplates', [{ name: 'Unused', fields: [{ key: 'x', label: 'X', type: 'text' }] }])
      ).body.formTemplates[0].id;
      assert.equal((await call(t.app, a.token, 'DELETE', `/formTemplates/${unused}`)).status, 200);
      // A file no submission names is deleted as before.
      const free = await upload(await image('png'), 'free.png', 'image/png', job);
      assert.equal((await call(t.app, a.token, 'DELETE', `/files/${free}`)).status, 200);
    });

    it('supersedes an earlier submission of the same template and job; a visit is of the job', async () => {
      const first = (await submit(good())).body.formSubmissions[0];
      const fix = await submit(good({ pressure: 21 }), { supersedes: { id: first.id } });
      assert.equal(fix.status, 200, fix.raw);
      assert.deepEqual(fix.body.formSubmissions[0].supersedes, { id: first.id });
      const tpl2 = (await post('formTemplates', [{ name: 'Other', fields: [{ key: 'x', label: 'X', type: 'text' }] }]))
        .body.formTemplates[0].id;
      const other = await post('formSubmissions', [
        { template: { id: tpl2 }, job: { id: job }, answers: { x: 'y' }, supersedes: { id: first.id } },
      ]);
      assert.deepEqual(errorsOf(other), [code('invalid', 'supersedes')]);
      const visit = (await post('visits', [{ job: { id: otherJob }, label: 'Elsewhere', ...TIMES }])).body.visits[0].id;
      assert.deepEqual(errorsOf(await submit(good(), { visit: { id: visit } })), [code('invalid', 'visit')]);
      const here = (await post('visits', [{ job: { id: job }, label: 'Here', ...TIMES }])).body.visits[0].id;
      const onVisit = await submit(good(), { visit: { id: here } });
      assert.deepEqual(onVisit.body.formSubmissions?.[0].visit, { id: here }, onVisit.raw);
      assert.deepEqual(errorsOf(await submit(good(), { location: { lat: 91, lng: 0 } })), [
        code('invalid', 'location'),
      ]);
      assert.deepEqual(
        errorsOf(
          await post('formSubmissions', [
            { template: { id: template }, job: { id: job }, answers: good(), sha256: 'x' },
          ]),
        ),
        [code('readOnly', 'sha256')],
      );
      assert.deepEqual(errorsOf(await submit(good(), {}, b.token)), [
        code('reference', 'template'),
        code('reference', 'job'),
      ]);
    });

    it('a job does not take a completed status while a form required to complete it has no submission', async () => {
      const statuses = (await call(t.app, a.token, 'GET', '/statuses?fields=group')).body.statuses as {
        id: number;
        group: string;
      }[];
      const done = statuses.find((s) => s.group === 'completed')!.id;
      const open = statuses.find((s) => s.group === 'inProgress')!.id;
      const must = (
        await post('formTemplates', [
          {
            name: 'Sign-off',
            requiredToComplete: true,
            fields: [{ key: 'ok', label: 'OK', type: 'boolean', required: true }],
          },
        ])
      ).body.formTemplates[0].id;
      const created = await post('jobs', [
        { title: 'Done already', status: { id: done }, formTemplates: [{ id: must }] },
      ]);
      assert.deepEqual(errorsOf(created), [code('invalid', 'status')]);
      const j = (
        await post('jobs', [
          { title: 'To sign', status: { id: open }, formTemplates: [{ id: must }, { id: template }] },
        ])
      ).body.jobs[0];
      const listed = await call(t.app, a.token, 'GET', `/jobs/${j.id}?fields=formTemplates`);
      assert.deepEqual(listed.body.jobs[0].formTemplates, [{ id: template }, { id: must }]); // in id order
      const move = () => call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: j.id, status: { id: done } }] });
      assert.deepEqual(errorsOf(await move()), [code('invalid', 'status')]);
      const s = await post('formSubmissions', [{ template: { id: must }, job: { id: j.id }, answers: { ok: true } }]);
      assert.equal(s.status, 200, s.raw);
      assert.equal((await move()).status, 200);
      // Not required to complete: no submission needed.
      assert.equal(
        (await post('jobs', [{ title: 'Free', status: { id: done }, formTemplates: [{ id: template }] }])).status,
        200,
      );
    });

    it('a Contractor submits and reads on the jobs they can see, and sees those events', async () => {
      const crew = await addUser(t, a, 'contractor');
      const theirs = await newJob('Their job');
      await post('visits', [{ job: { id: theirs }, user: { id: crew.id }, label: 'Visit', ...TIMES }]);
      const since = (await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0]?.id ?? 0;
      const pic = await upload(await image('png'), 'crew.png', 'image/png', theirs, crew.token);
      const mine = await post(
        'formSubmissions',
        [
          {
            template: { id: template },
            job: { id: theirs },
            answers: good({ signature: { file: { id: pic }, name: 'C' } }),
          },
        ],
        crew.token,
      );
      assert.equal(mine.status, 200, mine.raw);
      assert.deepEqual(mine.body.formSubmissions[0].submittedBy, { id: crew.id });
      const notTheirs = await post(
        'formSubmissions',
        [{ template: { id: template }, job: { id: job }, answers: good() }],
        crew.token,
      );
      assert.deepEqual(errorsOf(notTheirs), [code('reference', 'job')]);
      const listed = (await call(t.app, crew.token, 'GET', '/formSubmissions?recordsPerPage=1000')).body
        .formSubmissions;
      assert.deepEqual(
        listed.map((x: { job: { id: number } }) => x.job.id),
        [theirs],
      );
      const elsewhere = (await submit(good())).body.formSubmissions[0].id;
      assert.equal((await call(t.app, crew.token, 'GET', `/formSubmissions/${elsewhere}`)).status, 404);
      const events = (
        await call(t.app, crew.token, 'GET', `/events?recordsPerPage=1000&where=${encodeURIComponent(`id > ${since}`)}`)
      ).body.events as { type: string; data: { id: number } }[];
      const seen = events.filter((e) => e.type.startsWith('formSubmissions.')).map((e) => e.data.id);
      assert.deepEqual(seen, [mine.body.formSubmissions[0].id]);
    });
  });
}
