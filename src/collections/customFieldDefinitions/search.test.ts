import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';
import { foldText, searchWords } from '../../db/text.js';

describe('search words', () => {
  it('fold case and accents alike for the index and the query; anything but letters and digits separates', () => {
    assert.equal(foldText('Café ÜBER Ångström ﬁne'), 'cafe uber angstrom fine');
    assert.deepEqual(searchWords('bob@Example.com "boil*" OR NEAR(x) -y \\z'), [
      'bob',
      'example',
      'com',
      'boil',
      'or',
      'near',
      'x',
      'y',
      'z',
    ]);
    assert.deepEqual(searchWords('"*-\\()'), []);
  });
});

for (const dialect of DIALECTS) {
  describe(`q search (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect, { deliveries: false });

    const post = async (collection: string, items: unknown[], token = a.token) => {
      const res = await call(t.app, token, 'POST', `/${collection}`, { [collection]: items });
      assert.equal(res.status, 200, res.raw);
      return res.body[collection].map((i: { id: number }) => i.id) as number[];
    };
    const search = async (collection: string, q: string, extra = '', token = a.token) => {
      const res = await call(t.app, token, 'GET', `/${collection}?q=${encodeURIComponent(q)}${extra}`);
      assert.equal(res.status, 200, `${q}: ${res.raw}`);
      return res;
    };
    const found = async (collection: string, q: string, extra = '', token = a.token) =>
      (await search(collection, q, extra, token)).body[collection].map((i: { id: number }) => i.id) as number[];

    it('jobs: each word a prefix of a word, case and accents ignored, combined with where, fields and paging', async () => {
      const [boiler, boilers, cafe, oiler] = await post('jobs', [
        { title: 'Boiler service', address: { city: 'Leeds' } },
        { title: 'Fix', description: 'Two boilers, York' },
        { title: 'Café visit', orderNumber: 'PO-77' },
        { title: 'Oiler check' },
      ]);
      await post('jobs', [{ title: 'Boiler service', address: { city: 'Leeds' } }], b.token);
      assert.deepEqual((await found('jobs', 'boil')).sort(), [boiler, boilers].sort());
      assert.deepEqual(await found('jobs', 'boilers'), [boilers]);
      assert.deepEqual(await found('jobs', 'oiler'), [oiler]);
      assert.deepEqual(await found('jobs', 'BOIL leeds'), [boiler]);
      assert.deepEqual(await found('jobs', 'cafe'), [cafe]);
      assert.deepEqual(await found('jobs', 'CAFÉ'), [cafe]);
      assert.deepEqual(await found('jobs', 'po 77'), [cafe]);
      assert.deepEqual(await found('jobs', 'boil nowhere'), []);
      // The generated reference is searched too.
      const ref = (await call(t.app, a.token, 'GET', `/jobs/${oiler}`)).body.jobs[0].reference as string;
      assert.deepEqual(await found('jobs', ref), [oiler]);

      const withWhere = await search('jobs', 'boil', `&where=${encodeURIComponent('title ~ "fix"')}&fields=title`);
      assert.deepEqual(withWhere.body.jobs, [{ id: boilers, title: 'Fix' }]);
      assert.equal(withWhere.body.metadata.recordsCount, 1);
      const paged = await search('jobs', 'boil', '&recordsPerPage=1&page=2&sort=id');
      assert.deepEqual(
        paged.body.jobs.map((j: { id: number }) => j.id),
        [Math.max(boiler, boilers)],
      );
      assert.deepEqual(paged.body.metadata, { page: 2, pagesCount: 2, recordsPerPage: 1, recordsCount: 2 });

      // The index follows every write in its transaction.
      await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: oiler, title: 'Radiator check' }] });
      assert.deepEqual(await found('jobs', 'oiler'), []);
      assert.deepEqual(await found('jobs', 'radiat'), [oiler]);
      await call(t.app, a.token, 'DELETE', `/jobs/${cafe}`);
      assert.deepEqual(await found('jobs', 'cafe'), []);
    });

    it('ranks best matches first without sort (ties by id); sort overrides', async () => {
      const [weak, strong, tie1, tie2] = await post('jobs', [
        { title: 'Quokka one', description: 'a long text about many other things and once about nothing much' },
        { title: 'Quokka quokka', description: 'quokka quokka quokka' },
        { title: 'Wombat', description: 'plain' },
        { title: 'Wombat', description: 'plain' },
      ]);
      assert.deepEqual(await found('jobs', 'quokka'), [strong, weak]);
      assert.deepEqual(
        await found('jobs', 'quokka', '&sort=-id'),
        [strong, weak].sort((x, y) => y - x),
      );
      assert.deepEqual(await found('jobs', 'wombat'), [tie1, tie2]);
    });

    it('text custom fields are searched; users, clients and notes by their fields; the role scope holds', async () => {
      await call(t.app, a.token, 'POST', '/customFieldDefinitions', {
        customFieldDefinitions: [{ collection: 'jobs', key: 'partNo', label: 'Part', type: 'text' }],
      });
      const [job] = await post('jobs', [{ title: 'Part job', customFields: { partNo: 'Gasket-XJ9' } }]);
      assert.deepEqual(await found('jobs', 'gask xj9'), [job]);
      await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: job, customFields: { partNo: 'Washer' } }] });
      assert.deepEqual(await found('jobs', 'gask'), []);
      assert.deepEqual(await found('jobs', 'wash'), [job]);

      const [client] = await post('clients', [
        { name: 'Zephyr Ltd', email: 'office@zephyr.example', notes: 'Ring twice', address: { postcode: 'LS1 4AB' } },
      ]);
      assert.deepEqual(await found('clients', 'zeph'), [client]);
      assert.deepEqual(await found('clients', 'ls1 4ab'), [client]);
      assert.deepEqual(await found('clients', 'ring twi'), [client]);

      const [note] = await post('notes', [{ job: { id: job }, body: 'Dog in the garden — Ünsal knows' }]);
      assert.deepEqual(await found('notes', 'unsal gard'), [note]);

      // The account's first user (made outside the write pipeline) is found too.
      assert.deepEqual(await found('users', 'ada admin'), [a.adminId]);
      const con = await addUser(t, a, 'contractor', {
        firstName: 'Ximena',
        lastName: 'Builder',
        email: 'xb@example.com',
      });
      assert.deepEqual(await found('users', 'ximena'), [con.id]);
      assert.deepEqual(await found('users', 'xb example'), [con.id]);
      assert.deepEqual(await found('users', 'ximena', '', b.token), []);

      // A Contractor finds only the jobs they may see.
      const [theirs] = await post('jobs', [{ title: 'Gasket contractor job' }]);
      await post('visits', [
        {
          job: { id: theirs },
          user: { id: con.id },
          label: 'Visit',
          startTime: '2030-01-01T09:00:00Z',
          endTime: '2030-01-01T10:00:00Z',
        },
      ]);
      await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: job, title: 'Gasket office job' }] });
      assert.deepEqual((await found('jobs', 'gasket')).sort(), [job, theirs].sort());
      assert.deepEqual(await found('jobs', 'gasket', '', con.token), [theirs]);
    });

    it('sites and contacts are searched; custom fields live on sites, contacts, products, quotes and invoices', async () => {
      const [client] = await post('clients', [{ name: 'Search Holdings' }]);
      const [depot] = await post('sites', [
        { client: { id: client }, name: 'Northern Dépôt', address: { city: 'Harrogate' } },
      ]);
      const [zoe] = await post('contacts', [{ client: { id: client }, firstName: 'Zoë', title: 'Facilities manager' }]);
      assert.deepEqual(await found('sites', 'depot harro'), [depot]);
      assert.deepEqual(await found('contacts', 'zoe facil'), [zoe]);
      assert.deepEqual(await found('contacts', 'depot'), []);
      // Another account's items never match.
      assert.deepEqual(await found('sites', 'depot', '', b.token), []);
      const defs = ['sites', 'contacts', 'products', 'quotes', 'invoices'].map((collection) => ({
        collection,
        key: 'extRef',
        label: 'External reference',
        type: 'text',
        unique: true,
      }));
      await post('customFieldDefinitions', defs);
      const [product] = await post('products', [
        { name: 'Call-out', kind: 'labour', unitPrice: 80, customFields: { extRef: 'P-1' } },
      ]);
      const [invoice] = await post('invoices', [
        {
          client: { id: client },
          lines: [{ description: 'Call-out', quantity: 1, unitPrice: 80 }],
          customFields: { extRef: 'X-9' },
        },
      ]);
      const res = await call(t.app, a.token, 'PATCH', '/sites', {
        sites: [{ id: depot, customFields: { extRef: 'S-1' } }],
      });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.sites[0].customFields, { extRef: 'S-1' });
      const got = await call(
        t.app,
        a.token,
        'GET',
        `/invoices?where=${encodeURIComponent('customFields.extRef = "X-9"')}`,
      );
      assert.deepEqual(
        got.body.invoices.map((i: { id: number }) => i.id),
        [invoice],
      );
      const p = await call(t.app, a.token, 'GET', `/products/${product}`);
      assert.deepEqual(p.body.products[0].customFields, { extRef: 'P-1' });
      // unique holds on the new collections too: a second product with P-1 is a failure naming it.
      const dup = await call(t.app, a.token, 'POST', '/products', {
        products: [{ name: 'Other', kind: 'labour', unitPrice: 1, customFields: { extRef: 'P-1' } }],
      });
      assert.equal(dup.status, 422, dup.raw);
      assert.match(dup.raw, /customFields\.extRef/);
      const q = await call(t.app, a.token, 'GET', '/quotes?fields=customFields');
      assert.equal(q.status, 200, q.raw);
    });

    it('a deleted text definition is no longer matched by q, items written before it included; restoring matches again', async () => {
      const defs = await call(t.app, a.token, 'POST', '/customFieldDefinitions', {
        customFieldDefinitions: [
          { collection: 'jobs', key: 'serialRef', label: 'Serial', type: 'text' },
          { collection: 'jobs', key: 'kept', label: 'Kept', type: 'text' },
          { collection: 'clients', key: 'landRef', label: 'Landlord ref', type: 'text' },
        ],
      });
      assert.equal(defs.status, 200, defs.raw);
      const [serial, , land] = defs.body.customFieldDefinitions.map((d: { id: number }) => d.id);
      const setDeleted = async (id: number, deleted: boolean) => {
        const res = await call(t.app, a.token, 'PATCH', '/customFieldDefinitions', {
          customFieldDefinitions: [{ id, deleted }],
        });
        assert.equal(res.status, 200, res.raw);
      };
      const [both, only] = await post('jobs', [
        { title: 'Tap', customFields: { serialRef: 'Zanzibar-77', kept: 'Quasar' } },
        { title: 'Sink', customFields: { serialRef: 'Zanzibar-88' } },
      ]);
      // The other account's item of the same words stays as it is.
      await call(t.app, b.token, 'POST', '/customFieldDefinitions', {
        customFieldDefinitions: [{ collection: 'jobs', key: 'serialRef', label: 'Serial', type: 'text' }],
      });
      const [theirs] = await post('jobs', [{ title: 'Theirs', customFields: { serialRef: 'Zanzibar-99' } }], b.token);
      // More items than one page of the rewrite (SEARCH_REFRESH_PAGE, 500).
      for (let i = 0; i < 6; i++)
        await post(
          'clients',
          Array.from({ length: 100 }, (_, j) => ({
            name: `Tenant ${i}.${j}`,
            customFields: { landRef: `Mombasa${i}` },
          })),
        );
      const count = async (collection: string, q: string, token = a.token) =>
        (await search(collection, q, '&recordsPerPage=1', token)).body.metadata.recordsCount as number;
      assert.deepEqual((await found('jobs', 'zanzibar')).sort(), [both, only].sort());
      assert.equal(await count('clients', 'mombasa'), 600);

      await setDeleted(serial, true);
      assert.deepEqual(await found('jobs', 'zanzibar'), []);
      assert.deepEqual(await found('jobs', '77'), []);
      // The item's other words, and the live field's, are still matched.
      assert.deepEqual(await found('jobs', 'quasar tap'), [both]);
      assert.deepEqual(await found('jobs', 'sink'), [only]);
      assert.deepEqual(await found('jobs', 'zanzibar', '', b.token), [theirs]);
      // A later write of the item does not bring the value back into its text.
      await call(t.app, a.token, 'PATCH', '/jobs', { jobs: [{ id: only, title: 'Basin' }] });
      assert.deepEqual(await found('jobs', 'zanzibar'), []);
      assert.deepEqual(await found('jobs', 'basin'), [only]);
      await setDeleted(land, true);
      assert.equal(await count('clients', 'mombasa'), 0);
      assert.equal(await count('clients', 'tenant'), 600);

      // Restored: the values are matched again (the stored values were kept).
      await setDeleted(serial, false);
      assert.deepEqual((await found('jobs', 'zanzibar')).sort(), [both, only].sort());
      assert.deepEqual(await found('jobs', 'zanzibar 88 basin'), [only]);
      await setDeleted(land, false);
      assert.equal(await count('clients', 'mombasa'), 600);
      assert.equal(await count('clients', 'mombasa5'), 100);
    });

    it('hostile q is words only; no word does not filter; q elsewhere is a 400', async () => {
      const [job] = await post('jobs', [{ title: 'Hostile near test' }]);
      const all = (await search('jobs', '')).body.metadata.recordsCount;
      for (const q of [
        '"',
        '*',
        'OR',
        'NEAR(',
        '-',
        '\\',
        "'",
        ':*',
        '&|!',
        'hostile" OR "x',
        'hostile*',
        'NEAR(hostile test)',
        '-hostile',
        'hostile\\',
        "hostile' | 'x",
        'x'.repeat(10_000),
        'hostile '.repeat(1250),
        `${'é'.repeat(3000)} hostile`,
      ]) {
        const res = await search('jobs', q);
        assert.ok(Array.isArray(res.body.jobs), q.slice(0, 20));
      }
      assert.deepEqual(await found('jobs', 'hostile" OR "x'), []);
      assert.deepEqual(await found('jobs', 'NEAR(hostile test)'), [job]);
      assert.deepEqual(await found('jobs', '-hostile*'), [job]);
      assert.equal((await search('jobs', '"*-\\')).body.metadata.recordsCount, all);
      const many = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
      assert.equal((await call(t.app, a.token, 'GET', `/jobs?q=${many}`)).status, 400);
      assert.equal((await call(t.app, a.token, 'GET', '/statuses?q=x')).status, 400);
      assert.equal((await call(t.app, a.token, 'GET', '/visits?q=x')).status, 400);
      assert.equal((await call(t.app, a.token, 'GET', '/jobs?q=a&q=b')).status, 400);
      void errorsOf;
    });
  });
}
