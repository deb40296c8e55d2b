import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';

for (const dialect of DIALECTS) {
  describe(`custom fields (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect, { deliveries: false });

    const define = (items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', '/customFieldDefinitions', { customFieldDefinitions: items });
    const patchDef = (items: unknown[]) =>
      call(t.app, a.token, 'PATCH', '/customFieldDefinitions', { customFieldDefinitions: items });
    const jobs = (method: string, items: unknown[], token = a.token) =>
      call(t.app, token, method, '/jobs', { jobs: items });
    const get = (url: string, token = a.token) => call(t.app, token, 'GET', url);
    const where = (w: string, extra = '') => get(`/jobs?where=${encodeURIComponent(w)}${extra}`);

    it('definitions: Administrators write, every role reads; refusals name the field', async () => {
      const res = await define([{ collection: 'jobs', key: 'gasSafe', label: 'Gas Safe number', type: 'text' }]);
      assert.equal(res.status, 200, res.raw);
      const d = res.body.customFieldDefinitions[0];
      assert.equal(d.clientId, a.clientId);
      assert.equal(d.required, false);
      assert.equal(d.unique, false);
      assert.equal(d.options, null);
      const employee = await addUser(t, a, 'employee');
      const contractor = await addUser(t, a, 'contractor');
      assert.equal(
        (await define([{ collection: 'jobs', key: 'x', label: 'X', type: 'text' }], employee.token)).status,
        403,
      );
      for (const token of [employee.token, contractor.token]) {
        const read = await get('/customFieldDefinitions', token);
        assert.equal(read.status, 200, read.raw);
        assert.ok(read.body.customFieldDefinitions.some((x: { id: number }) => x.id === d.id));
      }
      // Another account sees none of them.
      assert.equal((await get('/customFieldDefinitions', b.token)).body.customFieldDefinitions.length, 0);

      const bad = await define([
        { collection: 'jobs', key: 'Bad', label: 'L', type: 'text' },
        { collection: 'jobs', key: '1abc', label: 'L', type: 'text' },
        { collection: 'jobs', key: `a${'b'.repeat(40)}`, label: 'L', type: 'text' },
        { collection: 'jobs', key: 'withOptions', label: 'L', type: 'text', options: ['a'] },
        { collection: 'jobs', key: 'noOptions', label: 'L', type: 'select' },
        { collection: 'notes', key: 'onNotes', label: 'L', type: 'text' },
        { collection: 'jobs', key: 'badType', label: 'L', type: 'colour' },
        { collection: 'jobs', key: 'dupOptions', label: 'L', type: 'select', options: ['a', 'a'] },
        { collection: 'jobs', key: 'emptyOption', label: 'L', type: 'select', options: [''] },
        { collection: 'jobs', key: 'noLabel', type: 'text' },
        { collection: 'jobs', key: 'client', label: 'L', type: 'text', clientId: 'mine' },
      ]);
      assert.equal(bad.status, 422, bad.raw);
      assert.deepEqual(errorsOf(bad), [
        '1041:key',
        '1041:key',
        '1041:key',
        '1041:options',
        '1040:options',
        '1041:collection',
        '1041:type',
        '1041:options',
        '1041:options',
        '1040:label',
        '1042:clientId',
      ]);
      const taken = await define([
        { collection: 'jobs', key: 'fresh', label: 'Fresh', type: 'text' },
        { collection: 'jobs', key: 'gasSafe', label: 'Again', type: 'text' },
      ]);
      assert.deepEqual(errorsOf(taken), ['1046:key']);
      // The same key on another collection is another field.
      assert.equal((await define([{ collection: 'users', key: 'gasSafe', label: 'L', type: 'text' }])).status, 200);

      // collection, key and type are fixed; label, options, required, unique change.
      const fixed = await patchDef([{ id: d.id, collection: 'users', key: 'other', type: 'number' }]);
      assert.deepEqual(errorsOf(fixed), ['1052:collection', '1052:key', '1052:type']);
      const same = await patchDef([{ id: d.id, collection: 'jobs', key: 'gasSafe', type: 'text', label: 'Gas Safe' }]);
      assert.equal(same.status, 200, same.raw);
      assert.equal((await patchDef([{ id: d.id, options: ['a'] }])).status, 422);
      // Deleted logically only: a key is never freed for another type.
      assert.equal((await call(t.app, a.token, 'DELETE', `/customFieldDefinitions/${d.id}`)).status, 403);
    });

    it('a key defined twice names key: in one batch, against a stored one, and under concurrency (never id)', async () => {
      const twice = await define([
        { collection: 'sites', key: 'twice', label: 'A', type: 'text' },
        { collection: 'sites', key: 'twice', label: 'B', type: 'number' },
        { collection: 'contacts', key: 'twice', label: 'C', type: 'text' },
      ]);
      assert.equal(twice.status, 422, twice.raw);
      assert.deepEqual(
        twice.body.failures.map((f: { errors: { code: number; field: string }[] }) =>
          f.errors.map((e) => `${e.code}:${e.field}`),
        ),
        [['1048:key']],
      );
      assert.deepEqual(twice.body.metadata.invalidItems, [1]);
      assert.equal(
        (await get('/customFieldDefinitions?where=' + encodeURIComponent('key = "twice"'))).body.metadata.recordsCount,
        0,
      );
      // Concurrent creates of one key: one is made, every other names key (the unique index's refusal too).
      for (let round = 0; round < 3; round++) {
        const key = `raced${round}`;
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => define([{ collection: 'sites', key, label: `L${i}`, type: 'text' }])),
        );
        assert.equal(results.filter((r) => r.status === 200).length, 1, results.map((r) => r.raw).join('\n'));
        for (const r of results.filter((x) => x.status !== 200)) {
          assert.equal(r.status, 422, r.raw);
          assert.deepEqual(errorsOf(r), ['1046:key'], r.raw);
        }
      }
    });

    it('values: {} by default, typed by the definitions, merged on PATCH, null removes', async () => {
      const defs = await define([
        { collection: 'jobs', key: 'colourCode', label: 'Colour', type: 'select', options: ['red', 'blue'] },
        { collection: 'jobs', key: 'floors', label: 'Floors', type: 'number' },
        { collection: 'jobs', key: 'pets', label: 'Pets', type: 'boolean' },
        { collection: 'jobs', key: 'certDate', label: 'Certified', type: 'date' },
        { collection: 'jobs', key: 'keySafe', label: 'Key safe', type: 'text' },
      ]);
      assert.equal(defs.status, 200, defs.raw);
      const plain = await jobs('POST', [{ title: 'No custom' }]);
      assert.deepEqual(plain.body.jobs[0].customFields, {});
      // Other accounts' items, and collections without definitions, show {} too.
      const theirs = await jobs('POST', [{ title: 'B job' }], b.token);
      assert.deepEqual(theirs.body.jobs[0].customFields, {});
      const users = await get(`/users/${a.adminId}`);
      assert.deepEqual(users.body.users[0].customFields, {});

      const made = await jobs('POST', [
        {
          title: 'Custom',
          customFields: { colourCode: 'red', floors: 3, pets: true, certDate: '2025-02-28', keySafe: '' },
        },
      ]);
      assert.equal(made.status, 200, made.raw);
      const job = made.body.jobs[0];
      assert.deepEqual(job.customFields, {
        certDate: '2025-02-28',
        colourCode: 'red',
        floors: 3,
        keySafe: '',
        pets: true,
      });
      const p = await jobs('PATCH', [{ id: job.id, customFields: { floors: 4.5, pets: null } }]);
      assert.equal(p.status, 200, p.raw);
      assert.deepEqual(p.body.jobs[0].customFields, {
        certDate: '2025-02-28',
        colourCode: 'red',
        floors: 4.5,
        keySafe: '',
      });
      // Several items in one PATCH (PostgreSQL writes them by one statement).
      const two = await jobs('POST', [{ title: 'Pair a' }, { title: 'Pair b', customFields: { floors: 1 } }]);
      const [ta, tb] = two.body.jobs.map((j: { id: number }) => j.id);
      const both = await jobs('PATCH', [
        { id: ta, customFields: { floors: 2, keySafe: 'K' } },
        { id: tb, customFields: { pets: false } },
      ]);
      assert.equal(both.status, 200, both.raw);
      assert.deepEqual(
        both.body.jobs.map((j: { customFields: unknown }) => j.customFields),
        [
          { floors: 2, keySafe: 'K' },
          { floors: 1, pets: false },
        ],
      );
      // A PATCH without customFields keeps them.
      const q = await jobs('PATCH', [{ id: job.id, title: 'Renamed' }]);
      assert.deepEqual(q.body.jobs[0].customFields, p.body.jobs[0].customFields);
      assert.deepEqual((await get(`/jobs/${job.id}?fields=customFields`)).body.jobs[0], {
        id: job.id,
        customFields: p.body.jobs[0].customFields,
      });

      const bad = await jobs('POST', [
        {
          title: 'Bad',
          customFields: {
            colourCode: 'Red',
            floors: '3',
            pets: 1,
            certDate: '2025-02-30',
            keySafe: 'x'.repeat(1001),
            unknownKey: 'x',
          },
        },
        { title: 'Bad 2', customFields: { gasSafe: 5 } },
      ]);
      assert.equal(bad.status, 422, bad.raw);
      assert.deepEqual(errorsOf(bad), [
        '1041:customFields.colourCode',
        '1041:customFields.floors',
        '1041:customFields.pets',
        '1041:customFields.certDate',
        '1041:customFields.keySafe',
        '1043:customFields.unknownKey',
        '1041:customFields.gasSafe',
      ]);
      for (const v of [[], 'x', null, 5])
        assert.deepEqual(errorsOf(await jobs('POST', [{ title: 'Bad 3', customFields: v }])), ['1041:customFields']);
      // 1,000 characters (not UTF-16 units) is the limit.
      const long = await jobs('PATCH', [{ id: job.id, customFields: { keySafe: '😀'.repeat(1000) } }]);
      assert.equal(long.status, 200, long.raw);
    });

    it('required holds for writes after it was set; unique is refused naming the key', async () => {
      const old = (await jobs('POST', [{ title: 'Before required' }])).body.jobs[0];
      const d = (
        await define([{ collection: 'jobs', key: 'siteRef', label: 'Site ref', type: 'text', required: true }])
      ).body.customFieldDefinitions[0];
      // Existing items are not checked, and still read.
      assert.equal((await get(`/jobs/${old.id}`)).status, 200);
      assert.equal((await jobs('PATCH', [{ id: old.id, title: 'Still fine' }])).status, 200);
      const missing = await jobs('POST', [{ title: 'Missing' }, { title: 'Null', customFields: { siteRef: null } }]);
      assert.deepEqual(errorsOf(missing), ['1040:customFields.siteRef', '1040:customFields.siteRef']);
      const ok = (await jobs('POST', [{ title: 'Has it', customFields: { siteRef: 'S1' } }])).body.jobs[0];
      assert.deepEqual(errorsOf(await jobs('PATCH', [{ id: ok.id, customFields: { siteRef: null } }])), [
        '1040:customFields.siteRef',
      ]);
      await patchDef([{ id: d.id, required: false }]);

      const u = (await define([{ collection: 'jobs', key: 'extId', label: 'Their id', type: 'text', unique: true }]))
        .body.customFieldDefinitions[0];
      const first = await jobs('POST', [{ title: 'Ext 1', customFields: { extId: 'ABC' } }]);
      assert.equal(first.status, 200, first.raw);
      const dup = await jobs('POST', [{ title: 'Ext 2', customFields: { extId: 'ABC' } }]);
      assert.deepEqual(errorsOf(dup), ['1046:customFields.extId']);
      // Case counts; within one batch the second is refused; nothing of a failed batch is written.
      const batch = await jobs('POST', [
        { title: 'Ext 3', customFields: { extId: 'abc' } },
        { title: 'Ext 4', customFields: { extId: 'abc' } },
      ]);
      assert.equal(batch.status, 422);
      assert.deepEqual(batch.body.metadata.invalidItems, [1]);
      assert.equal((await jobs('POST', [{ title: 'Ext 5', customFields: { extId: 'abc' } }])).status, 200);
      // A logically deleted item keeps its value; a physically deleted one frees it.
      const holder = first.body.jobs[0].id;
      await jobs('PATCH', [{ id: holder, deleted: true }]);
      assert.deepEqual(errorsOf(await jobs('POST', [{ title: 'Ext 6', customFields: { extId: 'ABC' } }])), [
        '1046:customFields.extId',
      ]);
      // Changing a value frees the old one.
      await jobs('PATCH', [{ id: holder, customFields: { extId: 'XYZ' } }]);
      assert.equal((await jobs('POST', [{ title: 'Ext 7', customFields: { extId: 'ABC' } }])).status, 200);
      assert.equal((await call(t.app, a.token, 'DELETE', `/jobs/${holder}`)).status, 200);
      const ext8 = (await jobs('POST', [{ title: 'Ext 8', customFields: { extId: 'XYZ' } }])).body.jobs[0].id;
      // `=` on a unique key finds its one holder (by the unique values' index where no JSON index answers).
      const holders = await where('customFields.extId = "XYZ" or customFields.extId = "nobody"');
      assert.deepEqual(
        holders.body.jobs.map((j: { id: number }) => j.id),
        [ext8],
      );
      // Another account may hold the same value.
      await define([{ collection: 'jobs', key: 'extId', label: 'Their id', type: 'text', unique: true }], b.token);
      assert.equal((await jobs('POST', [{ title: 'B', customFields: { extId: 'ABC' } }], b.token)).status, 200);

      // Setting unique never fails because of existing items; later writes are held to it.
      await define([{ collection: 'jobs', key: 'batchNo', label: 'Batch', type: 'number' }]);
      await jobs('POST', [
        { title: 'N1', customFields: { batchNo: 7 } },
        { title: 'N2', customFields: { batchNo: 7 } },
      ]);
      const bn = (await get('/customFieldDefinitions?where=key%20%3D%20%22batchNo%22')).body.customFieldDefinitions[0];
      assert.equal((await patchDef([{ id: bn.id, unique: true }])).status, 200);
      assert.deepEqual(errorsOf(await jobs('POST', [{ title: 'N3', customFields: { batchNo: 7 } }])), [
        '1046:customFields.batchNo',
      ]);
      assert.equal((await jobs('POST', [{ title: 'N4', customFields: { batchNo: 8 } }])).status, 200);
      // Both older items that share a value are still found by it (the unique values' index keeps
      // only the first of them, so `=` does not read it alone), and the new one by its own.
      const sevens = await where('customFields.batchNo = 7');
      assert.deepEqual(sevens.body.jobs.map((j: { title: string }) => j.title).sort(), ['N1', 'N2']);
      assert.equal(sevens.body.metadata.recordsCount, 2);
      assert.deepEqual(
        (await where('customFields.batchNo = 8')).body.jobs.map((j: { title: string }) => j.title),
        ['N4'],
      );
      void u;
    });

    it('unique under concurrency: of concurrent writes giving one value, exactly one succeeds', async () => {
      await define([{ collection: 'clients', key: 'crmId', label: 'CRM id', type: 'text', unique: true }]);
      const clients = (items: unknown[], method = 'POST') =>
        call(t.app, a.token, method, '/clients', { clients: items });
      for (let round = 0; round < 3; round++) {
        const value = `RACE-${round}`;
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            // Two items a request: each its own value, and the one they all want (one statement writes both).
            clients([
              { name: `Own ${round}.${i}`, customFields: { crmId: `${value}-${i}` } },
              { name: `Racer ${round}.${i}`, customFields: { crmId: value } },
            ]),
          ),
        );
        const won = results.filter((r) => r.status === 200);
        assert.equal(won.length, 1, results.map((r) => r.raw).join('\n'));
        for (const r of results.filter((x) => x.status !== 200))
          assert.deepEqual(errorsOf(r), ['1046:customFields.crmId'], r.raw);
        const held = await get(`/clients?where=${encodeURIComponent(`customFields.crmId = "${value}"`)}`);
        assert.equal(held.body.metadata.recordsCount, 1);
        // The losers' batches wrote nothing, their own values included.
        const own = await get(`/clients?where=${encodeURIComponent(`customFields.crmId ~ "${value}-"`)}`);
        assert.equal(own.body.metadata.recordsCount, 1);
      }
      // PATCHes of existing items racing for one value: one wins.
      const made = await clients(Array.from({ length: 6 }, (_, i) => ({ name: `Patched ${i}` })));
      const ids = made.body.clients.map((c: { id: number }) => c.id as number);
      const patched = await Promise.all(
        ids.map((id: number) => clients([{ id, customFields: { crmId: 'PATCH-RACE' } }], 'PATCH')),
      );
      assert.equal(patched.filter((r) => r.status === 200).length, 1, patched.map((r) => r.raw).join('\n'));
      const held = await get(`/clients?where=${encodeURIComponent('customFields.crmId = "PATCH-RACE"')}`);
      assert.equal(held.body.metadata.recordsCount, 1);
    });

    it('where and sort on customFields.<key> with the operators of its type', async () => {
      await define([
        { collection: 'jobs', key: 'wText', label: 'T', type: 'text' },
        { collection: 'jobs', key: 'wNum', label: 'N', type: 'number' },
        { collection: 'jobs', key: 'wBool', label: 'B', type: 'boolean' },
        { collection: 'jobs', key: 'wDate', label: 'D', type: 'date' },
        { collection: 'jobs', key: 'wSel', label: 'S', type: 'select', options: ['x', 'y'] },
      ]);
      const made = await jobs('POST', [
        { title: 'W1', customFields: { wText: 'Boiler Leeds', wNum: 10, wBool: true, wDate: '2025-01-01', wSel: 'x' } },
        {
          title: 'W2',
          customFields: { wText: 'boiler York', wNum: 2.5, wBool: false, wDate: '2025-06-01', wSel: 'y' },
        },
        { title: 'W3', customFields: { wNum: -1 } },
      ]);
      assert.equal(made.status, 200, made.raw);
      const [w1, w2, w3] = made.body.jobs.map((j: { id: number }) => j.id);
      const ids = async (w: string, extra = '') => {
        const res = await where(w, extra);
        assert.equal(res.status, 200, `${w}: ${res.raw}`);
        return res.body.jobs.map((j: { id: number }) => j.id);
      };
      assert.deepEqual(await ids('customFields.wText = "Boiler Leeds"'), [w1]);
      assert.deepEqual(await ids('customFields.wText ~ "BOILER"'), [w1, w2]);
      assert.deepEqual(await ids('customFields.wText !~ "york" and title ~ "W"'), [w1, w3]);
      assert.deepEqual(await ids('customFields.wText != "Boiler Leeds" and title ~ "W"'), [w2, w3]);
      assert.deepEqual(await ids('customFields.wText = null and title ~ "W"'), [w3]);
      assert.deepEqual(await ids('customFields.wNum > 2'), [w1, w2]);
      assert.deepEqual(await ids('customFields.wNum = 10'), [w1]);
      assert.deepEqual(await ids('customFields.wNum <= 2.5'), [w2, w3]);
      assert.deepEqual(await ids('customFields.wBool = true'), [w1]);
      assert.deepEqual(await ids('customFields.wBool = false'), [w2]);
      assert.deepEqual(await ids('customFields.wDate >= "2025-03-01"'), [w2]);
      assert.deepEqual(await ids('customFields.wSel = "y"'), [w2]);
      assert.deepEqual(await ids('customFields.wNum != 10 and title ~ "W"'), [w2, w3]);
      const sorted = await get('/jobs?sort=-customFields.wNum&where=title%20~%20%22W%22&fields=title');
      assert.equal(sorted.status, 200, sorted.raw);
      assert.deepEqual(
        sorted.body.jobs.map((j: { id: number }) => j.id),
        [w1, w2, w3],
      );
      const byText = await get('/jobs?sort=customFields.wText&where=title%20~%20%22W%22&fields=title');
      // Items without a value come last.
      assert.deepEqual(
        byText.body.jobs.map((j: { id: number }) => j.id),
        [w1, w2, w3],
      );
      for (const w of [
        'customFields.wText > "a"',
        'customFields.wBool < true',
        'customFields.wSel ~ "x"',
        'customFields.wNum ~ "1"',
        'customFields.wNum = "10"',
        'customFields.nope = 1',
        'customFields.wBool = 1',
      ]) {
        const res = await where(w);
        assert.equal(res.status, 400, `${w}: ${res.raw}`);
      }
      assert.equal((await get('/jobs?sort=customFields.nope')).status, 400);
      // Collections without custom fields know no such field.
      assert.equal((await get(`/notes?where=${encodeURIComponent('customFields.wNum = 1')}`)).status, 400);
      // Another account's definitions are not this one's.
      assert.equal(
        (await call(t.app, b.token, 'GET', `/jobs?where=${encodeURIComponent('customFields.wNum = 1')}`)).status,
        400,
      );
    });

    it('a deleted definition hides its values from answers, events, filters and writes; restoring brings them back', async () => {
      const d = (await define([{ collection: 'clients', key: 'landlordRef', label: 'Landlord', type: 'text' }])).body
        .customFieldDefinitions[0];
      const c = (
        await call(t.app, a.token, 'POST', '/clients', {
          clients: [{ name: 'Hidden', customFields: { landlordRef: 'L-1' } }],
        })
      ).body.clients[0];
      assert.deepEqual(c.customFields, { landlordRef: 'L-1' });
      // A remembered page is not answered again once the definition changes.
      const page = async () =>
        (await get('/clients?recordsPerPage=1000')).body.clients.find((x: { id: number }) => x.id === c.id)
          .customFields;
      assert.deepEqual(await page(), { landlordRef: 'L-1' });
      assert.equal((await patchDef([{ id: d.id, deleted: true }])).status, 200);
      assert.deepEqual(await page(), {});
      assert.deepEqual((await get(`/clients/${c.id}`)).body.clients[0].customFields, {});
      assert.equal((await get(`/clients?where=${encodeURIComponent('customFields.landlordRef = "L-1"')}`)).status, 400);
      assert.equal((await get('/clients?sort=customFields.landlordRef')).status, 400);
      const write = await call(t.app, a.token, 'PATCH', '/clients', {
        clients: [{ id: c.id, customFields: { landlordRef: 'L-2' } }],
      });
      assert.deepEqual(errorsOf(write), ['1043:customFields.landlordRef']);
      // Its key stays taken.
      assert.deepEqual(
        errorsOf(await define([{ collection: 'clients', key: 'landlordRef', label: 'L', type: 'number' }])),
        ['1046:key'],
      );
      const since = (await get('/events?sort=-id&recordsPerPage=1')).body.events[0].id;
      await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: c.id, name: 'Hidden 2' }] });
      const ev = (await get(`/events?where=${encodeURIComponent(`id > ${since} and collection = "clients"`)}`)).body
        .events;
      assert.deepEqual(ev[0].data.customFields, {});
      assert.equal(ev[0].changes.customFields, undefined);

      assert.equal((await patchDef([{ id: d.id, deleted: false }])).status, 200);
      assert.deepEqual((await get(`/clients/${c.id}`)).body.clients[0].customFields, { landlordRef: 'L-1' });
      assert.deepEqual(await page(), { landlordRef: 'L-1' });
    });

    it('events show a change of customFields as old and new', async () => {
      await define([{ collection: 'visits', key: 'gateCode', label: 'Gate', type: 'text' }]);
      await define([{ collection: 'users', key: 'badge', label: 'Badge', type: 'number' }]);
      const since = (await get('/events?sort=-id&recordsPerPage=1')).body.events[0].id;
      const p = await call(t.app, a.token, 'PATCH', '/users', {
        users: [{ id: a.adminId, customFields: { badge: 7 } }],
      });
      assert.equal(p.status, 200, p.raw);
      await call(t.app, a.token, 'PATCH', '/users', { users: [{ id: a.adminId, customFields: { badge: 8 } }] });
      const ev = (await get(`/events?where=${encodeURIComponent(`id > ${since}`)}`)).body.events;
      assert.deepEqual(
        ev.map((e: { changes: unknown }) => e.changes),
        [{ customFields: { old: {}, new: { badge: 7 } } }, { customFields: { old: { badge: 7 }, new: { badge: 8 } } }],
      );
    });
  });
}
