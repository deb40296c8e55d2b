import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, call, suiteWithTenants, errorsOf, skipUnless } from '../../../test/helpers.js';
import { purgeLocations } from './retention.js';

/** PRODUCT §11: location pings, append-only, the caller's own, purged after the retention. */
for (const dialect of DIALECTS) {
  describe(`locations (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let employee: { id: number; token: string };
    let contractor: { id: number; token: string };
    before(async () => {
      employee = await addUser(t, a, 'employee');
      contractor = await addUser(t, a, 'contractor');
    });

    const post = (items: unknown[], token = a.token) => call(t.app, token, 'POST', '/locations', { locations: items });

    it('creates with the caller as user and recordedAt now by default; each ping is an event', async () => {
      const res = await post([{ lat: 51.5, lng: -0.12, accuracy: 5 }], contractor.token);
      assert.equal(res.status, 200, res.raw);
      const l = res.body.locations[0];
      assert.deepEqual(Object.keys(l).sort(), [
        'account',
        'accuracy',
        'created',
        'id',
        'lat',
        'lng',
        'recordedAt',
        'user',
      ]);
      assert.deepEqual(l.user, { id: contractor.id });
      assert.equal(Date.parse(l.recordedAt), t.clock.now);
      assert.equal(l.lat, 51.5);
      const given = await post([{ lat: -90, lng: 180, accuracy: null, recordedAt: '2030-01-01T09:00:00+02:00' }]);
      assert.equal(given.status, 200, given.raw);
      assert.equal(Date.parse(given.body.locations[0].recordedAt), Date.parse('2030-01-01T07:00:00Z'));
      assert.equal(given.body.locations[0].accuracy, null);
      const events = await call(
        t.app,
        a.token,
        'GET',
        `/events?where=${encodeURIComponent('collection = "locations"')}`,
      );
      assert.ok(events.body.events.some((e: any) => e.item.id === l.id && e.type === 'locations.created'));
    });

    it('user is read-only; PATCH and DELETE are 405 with Allow; nothing changes', async () => {
      const sent = await post([{ lat: 1, lng: 1, user: { id: employee.id } }]);
      assert.deepEqual(errorsOf(sent), ['1042:user']);
      const id = (await post([{ lat: 1, lng: 2 }])).body.locations[0].id;
      for (const [method, url] of [
        ['PATCH', `/locations/${id}`],
        ['DELETE', `/locations/${id}`],
        ['PATCH', '/locations'],
        ['DELETE', '/locations'],
      ]) {
        const res = await call(t.app, a.token, method, url, { locations: [{ id, lat: 3 }] });
        assert.equal(res.status, 405, `${method} ${url}: ${res.raw}`);
        assert.equal(res.body.error.code, 1050);
        assert.ok(res.headers.allow, 'Allow header');
        assert.ok(!String(res.headers.allow).includes('PATCH'));
      }
      assert.equal((await call(t.app, a.token, 'GET', `/locations/${id}`)).body.locations[0].lat, 1);
    });

    it('bad coordinates and times name the field; nothing saved', async () => {
      const cases: [Record<string, unknown>, string[]][] = [
        [{ lat: 90.0001, lng: 0 }, ['1041:lat']],
        [{ lat: 0, lng: -181 }, ['1041:lng']],
        [{ lat: 0, lng: 0, accuracy: -0.5 }, ['1041:accuracy']],
        [{ lat: 'north', lng: 0 }, ['1041:lat']],
        [{ lng: 0 }, ['1040:lat']],
        [{ lat: 0, lng: 0, recordedAt: 'now' }, ['1041:recordedAt']],
        [{ lat: 0, lng: 0, recordedAt: '2030-13-01T00:00:00Z' }, ['1041:recordedAt']],
      ];
      const before = (await call(t.app, a.token, 'GET', '/locations')).body.metadata.recordsCount;
      for (const [item, expected] of cases) {
        const res = await post([{ lat: 1, lng: 1 }, item]);
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), expected, JSON.stringify(item));
      }
      assert.equal((await call(t.app, a.token, 'GET', '/locations')).body.metadata.recordsCount, before);
    });

    it('Administrators and Employees read all, Contractors their own; another account sees none', async () => {
      await post([{ lat: 2, lng: 2 }], employee.token);
      await post([{ lat: 3, lng: 3 }], contractor.token);
      const all = (await call(t.app, employee.token, 'GET', '/locations?recordsPerPage=1000')).body.locations;
      assert.ok(all.some((l: any) => l.user.id === contractor.id) && all.some((l: any) => l.user.id === employee.id));
      const own = await call(t.app, contractor.token, 'GET', '/locations?recordsPerPage=1000');
      assert.ok(own.body.locations.length > 0);
      assert.ok(own.body.locations.every((l: any) => l.user.id === contractor.id));
      const other = all.find((l: any) => l.user.id !== contractor.id);
      assert.equal((await call(t.app, contractor.token, 'GET', `/locations/${other.id}`)).status, 404);
      assert.equal((await call(t.app, b.token, 'GET', `/locations/${other.id}`)).status, 404);
      assert.equal((await call(t.app, b.token, 'GET', '/locations')).body.locations.length, 0);
    });

    it('purged once recordedAt is older than the retention, in every account; newer ones stay', async () => {
      const now = t.clock.now;
      const old = (await post([{ lat: 4, lng: 4, recordedAt: new Date(now - 31 * 86_400_000).toISOString() }])).body
        .locations[0].id;
      const oldB = (
        await post([{ lat: 4, lng: 4, recordedAt: new Date(now - 40 * 86_400_000).toISOString() }], b.token)
      ).body.locations[0].id;
      const kept = (await post([{ lat: 5, lng: 5, recordedAt: new Date(now - 29 * 86_400_000).toISOString() }])).body
        .locations[0].id;
      const gone = await purgeLocations(t.database, now, 30, 1);
      assert.ok(gone >= 2, `${gone}`);
      assert.equal((await call(t.app, a.token, 'GET', `/locations/${old}`)).status, 404);
      assert.equal((await call(t.app, b.token, 'GET', `/locations/${oldB}`)).status, 404);
      assert.equal((await call(t.app, a.token, 'GET', `/locations/${kept}`)).status, 200);
    });
  });
}
