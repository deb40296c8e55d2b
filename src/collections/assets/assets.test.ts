import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, errorsOf, skipUnless } from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';

/** PRODUCT §16, the equipment: assets, their service dates, jobs' assets and an asset's service history. */
const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

for (const dialect of DIALECTS) {
  describe(`assets (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let client: number;
    let otherClient: number;
    let site: number;
    let site2: number;
    let otherSite: number;
    before(async () => {
      const clients = (await post('clients', [{ name: 'Acme' }, { name: 'Other' }])).body.clients;
      [client, otherClient] = clients.map((c: { id: number }) => c.id);
      const sites = (
        await post('sites', [
          { client: { id: client }, name: 'HQ' },
          { client: { id: client }, name: 'Depot' },
          { client: { id: otherClient }, name: 'Elsewhere' },
        ])
      ).body.sites;
      [site, site2, otherSite] = sites.map((s: { id: number }) => s.id);
    });
    const post = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${col}`, { [col]: items });
    const patch = (col: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'PATCH', `/${col}`, { [col]: items });
    const get = (url: string, token = a.token) => call(t.app, token, 'GET', url);
    const asset = async (extra: Record<string, unknown> = {}) => {
      const res = await post('assets', [{ site: { id: site }, name: 'Boiler', ...extra }]);
      assert.equal(res.status, 200, res.raw);
      return res.body.assets[0];
    };

    it("an asset: the site required, the client the site's (read-only), every member checked", async () => {
      const made = await asset({
        kind: 'boiler',
        make: 'Vaillant',
        model: 'ecoTEC plus',
        serialNumber: 'V-1',
        installedOn: '2024-01-31',
        warrantyUntil: '2029-01-31',
        serviceIntervalMonths: 12,
        notes: 'In the loft',
      });
      assert.deepEqual(made.client, { id: client });
      assert.deepEqual(made.site, { id: site });
      assert.equal(made.lastServicedOn, null);
      assert.equal(made.nextServiceDue, '2025-01-31');
      assert.deepEqual(made.customFields, {});
      const full = await get(`/assets/${made.id}?fields=client,[*]`);
      assert.deepEqual(full.body.assets[0].client, { id: client, name: 'Acme' });

      assert.deepEqual(errorsOf(await post('assets', [{ name: 'X' }])), [code('required', 'site')]);
      assert.deepEqual(errorsOf(await post('assets', [{ site: { id: site } }])), [code('required', 'name')]);
      assert.deepEqual(errorsOf(await post('assets', [{ site: { id: site }, name: 'X', client: { id: client } }])), [
        code('readOnly', 'client'),
      ]);
      for (const [member, value] of [
        ['serviceIntervalMonths', 0],
        ['serviceIntervalMonths', 121],
        ['serviceIntervalMonths', 1.5],
        ['serviceIntervalMonths', '12'],
        ['installedOn', '2024-02-30'],
        ['installedOn', '2024-1-1'],
        ['warrantyUntil', 'soon'],
        ['serialNumber', ''],
        ['name', ''],
        ['lastServicedOn', '2024-01-01'],
        ['nextServiceDue', '2024-01-01'],
      ] as const) {
        const res = await post('assets', [{ site: { id: site }, name: 'X', [member]: value }]);
        assert.equal(res.status, 422, `${member} ${JSON.stringify(value)}`);
        assert.equal(errorsOf(res).length, 1, res.raw);
        assert.match(errorsOf(res)[0], new RegExp(`:${member}$`), res.raw);
      }
      // Another account's site does not exist here; nothing partial in a batch.
      const theirs = (await post('clients', [{ name: 'B' }], b.token)).body.clients[0].id;
      const theirSite = (await post('sites', [{ client: { id: theirs }, name: 'B site' }], b.token)).body.sites[0].id;
      const mixed = await post('assets', [
        { site: { id: site }, name: 'Fine' },
        { site: { id: theirSite }, name: 'Not here' },
      ]);
      assert.deepEqual(errorsOf(mixed), [code('reference', 'site')]);
      assert.equal((await get('/assets?where=name = "Fine"')).body.assets.length, 0);
      // Maximum interval and the bounds of the month.
      assert.equal(
        (await asset({ serviceIntervalMonths: 120, installedOn: '2024-02-29' })).nextServiceDue,
        '2034-02-28',
      );
      assert.equal((await asset({ serviceIntervalMonths: 1 })).nextServiceDue, null, 'no date: null');
      assert.equal((await asset({ installedOn: '2024-02-29' })).nextServiceDue, null, 'no interval: null');
    });

    it('serialNumber: unique in the account, logically deleted assets included; null for many', async () => {
      const first = await asset({ serialNumber: 'SN-77' });
      assert.deepEqual(errorsOf(await post('assets', [{ site: { id: site2 }, name: 'Y', serialNumber: 'SN-77' }])), [
        code('unique', 'serialNumber'),
      ]);
      assert.equal((await patch('assets', [{ id: first.id, deleted: true }])).status, 200);
      assert.deepEqual(errorsOf(await post('assets', [{ site: { id: site }, name: 'Y', serialNumber: 'SN-77' }])), [
        code('unique', 'serialNumber'),
      ]);
      await asset({ serialNumber: null });
      await asset({ serialNumber: null });
      // Another account has its own serial numbers.
      const theirs = (await post('clients', [{ name: 'B2' }], b.token)).body.clients[0].id;
      const theirSite = (await post('sites', [{ client: { id: theirs }, name: 'B2 site' }], b.token)).body.sites[0].id;
      assert.equal(
        (await post('assets', [{ site: { id: theirSite }, name: 'Z', serialNumber: 'SN-77' }], b.token)).status,
        200,
      );
    });

    it('q searches name, make, model and serialNumber; customFields on assets', async () => {
      await asset({ name: 'Air handler', make: 'Daikin', model: 'Sky FXFQ', serialNumber: 'DK-9000' });
      for (const q of ['daikin', 'fxfq', 'DK-9000', 'handler']) {
        const res = await get(`/assets?q=${encodeURIComponent(q)}`);
        assert.equal(res.status, 200, res.raw);
        assert.deepEqual(
          res.body.assets.map((x: { name: string }) => x.name),
          ['Air handler'],
          q,
        );
      }
      assert.equal((await get('/assets?q=loft')).body.assets.length, 0, 'notes are not searched');
      const def = await post('customFieldDefinitions', [
        { collection: 'assets', key: 'refrigerant', label: 'Refrigerant', type: 'text' },
      ]);
      assert.equal(def.status, 200, def.raw);
      const withCustom = await asset({ customFields: { refrigerant: 'R32' } });
      assert.deepEqual(withCustom.customFields, { refrigerant: 'R32' });
      assert.deepEqual(errorsOf(await post('assets', [{ site: { id: site }, name: 'C', customFields: { nope: 1 } }])), [
        code('unknown', 'customFields.nope'),
      ]);
      const found = await get('/assets?where=customFields.refrigerant = "R32"');
      assert.deepEqual(
        found.body.assets.map((x: { id: number }) => x.id),
        [withCustom.id],
      );
    });

    it("jobs' assets: assets of the job's site only; where=assets.id = N is the asset's service history", async () => {
      const boiler = await asset({ name: 'Boiler A' });
      const pump = await asset({ name: 'Pump A' });
      const [atDepot] = (await post('assets', [{ site: { id: site2 }, name: 'Depot boiler' }])).body.assets;
      const job = await post('jobs', [
        { title: 'Service', client: { id: client }, site: { id: site }, assets: [{ id: boiler.id }, { id: pump.id }] },
      ]);
      assert.equal(job.status, 200, job.raw);
      const jobId = job.body.jobs[0].id;
      // Not a default field (a job read stays one statement): asked by name.
      assert.equal(job.body.jobs[0].assets, undefined);
      assert.deepEqual((await get(`/jobs/${jobId}?fields=assets`)).body.jobs[0].assets, [
        { id: boiler.id },
        { id: pump.id },
      ]);
      const expanded = await get(`/jobs/${jobId}?fields=assets,[*]`);
      assert.deepEqual(expanded.body.jobs[0].assets, [
        { id: boiler.id, name: 'Boiler A' },
        { id: pump.id, name: 'Pump A' },
      ]);
      // An asset of another site, of no site (a job without one), of another account: failures naming assets.
      assert.deepEqual(
        errorsOf(
          await post('jobs', [
            { title: 'X', client: { id: client }, site: { id: site }, assets: [{ id: atDepot.id }] },
          ]),
        ),
        [code('invalid', 'assets')],
      );
      assert.deepEqual(errorsOf(await post('jobs', [{ title: 'X', assets: [{ id: boiler.id }] }])), [
        code('invalid', 'assets'),
      ]);
      const theirClient = (await post('clients', [{ name: 'B3' }], b.token)).body.clients[0].id;
      const theirSite = (await post('sites', [{ client: { id: theirClient }, name: 'B3 site' }], b.token)).body.sites[0]
        .id;
      const [theirAsset] = (await post('assets', [{ site: { id: theirSite }, name: 'Theirs' }], b.token)).body.assets;
      const foreign = await patch('jobs', [{ id: jobId, assets: [{ id: theirAsset.id }] }]);
      assert.equal(foreign.status, 422, foreign.raw);
      assert.ok(
        errorsOf(foreign).every((e) => e.endsWith(':assets')),
        foreign.raw,
      );
      // Moving the job to another site keeps its assets only if they are of that site.
      assert.deepEqual(errorsOf(await patch('jobs', [{ id: jobId, site: { id: site2 } }])), [
        code('invalid', 'assets'),
      ]);
      assert.equal(
        (await patch('jobs', [{ id: jobId, site: { id: site2 }, assets: [{ id: atDepot.id }] }])).status,
        200,
      );
      assert.equal((await patch('jobs', [{ id: jobId, site: { id: site }, assets: [{ id: boiler.id }] }])).status, 200);
      const second = (
        await post('jobs', [
          { title: 'Repair', client: { id: client }, site: { id: site }, assets: [{ id: boiler.id }] },
        ])
      ).body.jobs[0].id;
      await post('jobs', [{ title: 'Unrelated', client: { id: client }, site: { id: site } }]);
      const history = await get(`/jobs?where=${encodeURIComponent(`assets.id = ${boiler.id}`)}&sort=id`);
      assert.equal(history.status, 200, history.raw);
      assert.deepEqual(
        history.body.jobs.map((j: { id: number }) => j.id),
        [jobId, second],
      );
      assert.equal(history.body.metadata.recordsCount, 2);
      const pumpHistory = await get(`/jobs?where=${encodeURIComponent(`assets.id = ${pump.id}`)}`);
      assert.equal(pumpHistory.body.jobs.length, 0, 'the pump left the job');
      const without = await get(`/jobs?where=${encodeURIComponent(`assets.id != ${boiler.id} and site.id = ${site}`)}`);
      assert.ok(without.body.jobs.every((j: { id: number }) => j.id !== jobId && j.id !== second));
      // Another account's asset id lists nothing of theirs to us.
      assert.equal(
        (await get(`/jobs?where=${encodeURIComponent(`assets.id = ${theirAsset.id}`)}`)).body.jobs.length,
        0,
      );
      for (const bad of ['assets.id > 3', 'assets.id = "3"', 'assets.id = 0', 'assets.name = "x"'])
        assert.equal((await get(`/jobs?where=${encodeURIComponent(bad)}`)).status, 400, bad);
    });

    it('lastServicedOn: the local date of the latest check-out of a visit of a job listing the asset; nextServiceDue from it', async () => {
      await t.database.db
        .updateTable('accounts')
        .set({ time_zone: 'America/New_York' })
        .where('id', '=', a.accountId)
        .execute();
      const unit = await asset({ name: 'Chiller', installedOn: '2020-05-31', serviceIntervalMonths: 3 });
      const lonely = await asset({ name: 'Lonely', installedOn: '2021-01-31', serviceIntervalMonths: 1 });
      assert.equal(unit.nextServiceDue, '2020-08-31');
      const job = (
        await post('jobs', [
          { title: 'Chiller service', client: { id: client }, site: { id: site }, assets: [{ id: unit.id }] },
        ])
      ).body.jobs[0].id;
      const visit = (
        await post('visits', [
          {
            job: { id: job },
            user: { id: a.adminId },
            label: 'V',
            startTime: '2030-01-01T09:00:00Z',
            endTime: '2030-01-01T10:00:00Z',
          },
        ])
      ).body.visits[0].id;
      // 03:30 UTC on 1 March is still 28 February in New York (a token made at that time).
      t.clock.now = Date.parse('2030-03-01T03:30:00Z');
      const token = await a.tokenFor(a.adminId);
      assert.equal((await call(t.app, token, 'POST', `/visits/${visit}/checkIn`)).status, 200);
      const out = await call(t.app, token, 'POST', `/visits/${visit}/checkOut`);
      assert.equal(out.status, 200, out.raw);
      const after = (await get(`/assets/${unit.id}`, token)).body.assets[0];
      assert.equal(after.lastServicedOn, '2030-02-28');
      assert.equal(after.nextServiceDue, '2030-05-28');
      // In a list too, each row its own; an asset on no job has none.
      const listed = await get(
        `/assets?where=${encodeURIComponent(`id = ${unit.id} or name = "Lonely"`)}&fields=lastServicedOn,nextServiceDue&sort=id`,
        token,
      );
      assert.deepEqual(listed.body.assets, [
        { id: unit.id, lastServicedOn: '2030-02-28', nextServiceDue: '2030-05-28' },
        { id: lonely.id, lastServicedOn: null, nextServiceDue: '2021-02-28' },
      ]);
      t.clock.now = Date.now();
    });

    it("a site moved to another client takes its assets' client along", async () => {
      const [moving] = (await post('sites', [{ client: { id: client }, name: 'Moving' }])).body.sites;
      const thing = (await post('assets', [{ site: { id: moving.id }, name: 'Thing' }])).body.assets[0];
      const before = (await get(`/assets/${thing.id}`)).headers.etag;
      assert.equal((await patch('sites', [{ id: moving.id, client: { id: otherClient } }])).status, 200);
      const moved = await get(`/assets/${thing.id}`);
      assert.deepEqual(moved.body.assets[0].client, { id: otherClient });
      assert.notEqual(moved.headers.etag, before);
    });

    it('Contractors read the assets of every client of the jobs they see, and never write one (403)', async () => {
      const con = await addUser(t, a, 'contractor');
      const seen = (await post('assets', [{ site: { id: site2 }, name: 'Seen via client' }])).body.assets[0];
      const hidden = (await post('assets', [{ site: { id: otherSite }, name: 'Hidden' }])).body.assets[0];
      assert.equal((await get(`/assets/${seen.id}`, con.token)).status, 404, 'no job of theirs yet');
      const job = (await post('jobs', [{ title: 'Theirs', client: { id: client }, site: { id: site } }])).body.jobs[0]
        .id;
      await post('visits', [
        {
          job: { id: job },
          user: { id: con.id },
          label: 'V',
          startTime: '2030-02-01T09:00:00Z',
          endTime: '2030-02-01T10:00:00Z',
        },
      ]);
      // Of any site of that client (the job is at HQ, the asset at the Depot).
      assert.equal((await get(`/assets/${seen.id}`, con.token)).status, 200);
      assert.equal((await get(`/assets/${hidden.id}`, con.token)).status, 404);
      const list = (await get('/assets?recordsPerPage=1000', con.token)).body.assets;
      assert.ok(list.some((x: { id: number }) => x.id === seen.id));
      assert.ok(list.every((x: { client: { id: number } }) => x.client.id === client));
      assert.equal((await post('assets', [{ site: { id: site }, name: 'No' }], con.token)).status, 403);
      assert.equal((await patch('assets', [{ id: seen.id, name: 'No' }], con.token)).status, 403);
      assert.equal((await call(t.app, con.token, 'DELETE', `/assets/${seen.id}`)).status, 403);
      // Their jobs' service history, by an asset they can see.
      assert.equal(
        (await patch('jobs', [{ id: job, assets: [{ id: (await asset({ name: 'On their job' })).id }] }])).status,
        200,
      );
      const employee = await addUser(t, a, 'employee');
      assert.equal(
        (await post('assets', [{ site: { id: site }, name: 'By an employee' }], employee.token)).status,
        200,
      );
    });
  });
}
