import { describe, it } from 'node:test';
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
const ids = (items: { id: number }[]) => items.map((i) => i.id).sort((x, y) => x - y);

for (const dialect of DIALECTS) {
  describe(`places: locations, sites, contacts, a job's site (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const post = async (collection: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'POST', `/${collection}`, { [collection]: items });
    const patch = async (collection: string, items: unknown[], token = a.token) =>
      call(t.app, token, 'PATCH', `/${collection}`, { [collection]: items });
    const one = async (collection: string, item: unknown, token = a.token) => {
      const res = await post(collection, [item], token);
      assert.equal(res.status, 200, res.raw);
      return res.body[collection][0];
    };

    describe('address.location', () => {
      it('stores {lat, lng} with 7 decimals exactly, reads it back, and null or a whole address replaces it', async () => {
        const location = { lat: -33.8688197, lng: 151.2092955 };
        const c = await one('clients', { name: 'Sydney', address: { city: 'Sydney', location } });
        assert.deepEqual(c.address, { city: 'Sydney', location });
        const got = await call(t.app, a.token, 'GET', `/clients/${c.id}?fields=address`);
        assert.deepEqual(got.body.clients[0].address, { city: 'Sydney', location });
        // Extremes are in range.
        const edge = { lat: -90, lng: 180 };
        const j = await one('jobs', { title: 'Pole', address: { location: edge } });
        assert.deepEqual(j.address, { location: edge });
        // null: no location; a written address without one drops it (addresses are written whole).
        let p = await patch('clients', [{ id: c.id, address: { city: 'Sydney', location: null } }]);
        assert.equal(p.status, 200, p.raw);
        assert.deepEqual(p.body.clients[0].address, { city: 'Sydney' });
        p = await patch('clients', [{ id: c.id, address: { location } }]);
        assert.deepEqual(p.body.clients[0].address, { location });
        p = await patch('clients', [{ id: c.id, address: { city: 'Manly' } }]);
        assert.deepEqual(p.body.clients[0].address, { city: 'Manly' });
        const rows = await t.database.db
          .selectFrom('clients')
          .select(['address_lat', 'address_lng'])
          .where('id', '=', c.id)
          .execute();
        assert.deepEqual(rows, [{ address_lat: null, address_lng: null }]);
      });

      it('refuses anything but {lat, lng} in range with at most 7 decimals, naming address.location', async () => {
        const bad: unknown[] = [
          { lat: 90.0000001, lng: 0 },
          { lat: -91, lng: 0 },
          { lat: 0, lng: 180.5 },
          { lat: 0, lng: -181 },
          { lat: 1.12345678, lng: 0 },
          { lat: 0, lng: 1e-8 },
          { lat: 10 },
          { lng: 10 },
          {},
          { lat: '1', lng: 2 },
          { lat: 1, lng: 2, alt: 3 },
          [1, 2],
          'here',
          5,
          true,
        ];
        for (const location of bad) {
          for (const collection of ['clients', 'jobs', 'sites']) {
            const c = collection === 'sites' ? await one('clients', { name: 'For a site' }) : undefined;
            const item =
              collection === 'clients'
                ? { name: 'X', address: { location } }
                : collection === 'jobs'
                  ? { title: 'X', address: { location } }
                  : { client: { id: c.id }, name: 'X', address: { location } };
            const res = await post(collection, [item]);
            assert.equal(res.status, 422, `${collection} ${JSON.stringify(location)}: ${res.raw}`);
            assert.deepEqual(errorsOf(res), [code('invalid', 'address.location')], JSON.stringify(location));
          }
        }
        // 7 decimals, negative zero and integers are fine.
        for (const location of [
          { lat: 1.1234567, lng: -179.9999999 },
          { lat: 0, lng: 0 },
          { lat: 1e-7, lng: -1e-7 },
        ]) {
          const c = await one('clients', { name: 'Ok', address: { location } });
          assert.deepEqual(c.address.location, location);
        }
      });

      it('is not a filter or sort field, and other address members keep their own failures', async () => {
        const res = await call(t.app, a.token, 'GET', '/clients?where=address.location = null');
        assert.equal(res.status, 400, res.raw);
        const both = await post('clients', [{ name: 'X', address: { city: 5, location: { lat: 100, lng: 0 } } }]);
        assert.deepEqual(errorsOf(both), [code('invalid', 'address.location')]);
      });
    });

    describe('sites', () => {
      it('creates, reads, lists, patches and deletes; client and name required', async () => {
        const client = await one('clients', { name: 'Landlord' });
        const s = await one('sites', {
          client: { id: client.id },
          name: 'Block A',
          address: { line1: '1 Quay', location: { lat: 51.5, lng: -0.12 } },
          notes: 'Key at reception',
        });
        assert.deepEqual(
          { ...s, created: undefined, modified: undefined },
          {
            id: s.id,
            client: { id: client.id },
            name: 'Block A',
            address: { line1: '1 Quay', location: { lat: 51.5, lng: -0.12 } },
            notes: 'Key at reception',
            customFields: {},
            account: { id: a.accountId },
            deleted: false,
            created: undefined,
            modified: undefined,
          },
        );
        const got = await call(t.app, a.token, 'GET', `/sites/${s.id}?fields=client.name,name`);
        assert.deepEqual(got.body.sites, [{ id: s.id, client: { id: client.id, name: 'Landlord' }, name: 'Block A' }]);
        assert.deepEqual(errorsOf(await post('sites', [{ notes: 'x' }])).sort(), [
          code('required', 'client'),
          code('required', 'name'),
        ]);
        assert.deepEqual(errorsOf(await post('sites', [{ client: { id: 999999 }, name: 'x' }])), [
          code('reference', 'client'),
        ]);
        const p = await patch('sites', [{ id: s.id, name: 'Block B', deleted: true }]);
        assert.equal(p.status, 200, p.raw);
        assert.equal(p.body.sites[0].name, 'Block B');
        const d = await call(t.app, a.token, 'DELETE', `/sites/${s.id}`);
        assert.equal(d.status, 200, d.raw);
        assert.equal((await call(t.app, a.token, 'GET', `/sites/${s.id}`)).status, 404);
        await assertAtomicBatch(
          t,
          a,
          'sites',
          { client: { id: client.id }, name: 'Good' },
          { client: { id: client.id } },
        );
      });

      it("stay in their account: another account's site is not found, nor its client usable", async () => {
        const cb = await one('clients', { name: 'B client' }, b.token);
        const sb = await one('sites', { client: { id: cb.id }, name: 'B site' }, b.token);
        await assertIsolated(t, a, b, 'sites', sb.id, { name: 'stolen' });
        assert.deepEqual(errorsOf(await post('sites', [{ client: { id: cb.id }, name: 'x' }])), [
          code('reference', 'client'),
        ]);
        const res = await post('jobs', [{ title: 'x', site: { id: sb.id } }]);
        assert.deepEqual(errorsOf(res), [code('reference', 'site')]);
      });
    });

    describe("a job's site", () => {
      it("must be a site of the job's client, on create and when a PATCH moves the job", async () => {
        const c1 = await one('clients', { name: 'One' });
        const c2 = await one('clients', { name: 'Two' });
        const s1 = await one('sites', { client: { id: c1.id }, name: 'S1' });
        const s2 = await one('sites', { client: { id: c2.id }, name: 'S2' });
        assert.deepEqual(errorsOf(await post('jobs', [{ title: 'x', client: { id: c1.id }, site: { id: s2.id } }])), [
          code('invalid', 'site'),
        ]);
        assert.deepEqual(errorsOf(await post('jobs', [{ title: 'x', site: { id: s1.id } }])), [
          code('invalid', 'site'),
        ]);
        const j = await one('jobs', { title: 'ok', client: { id: c1.id }, site: { id: s1.id } });
        assert.deepEqual(j.site, { id: s1.id });
        // Moving the job to another client while it keeps a site of the first fails naming site.
        let p = await patch('jobs', [{ id: j.id, client: { id: c2.id } }]);
        assert.equal(p.status, 422, p.raw);
        assert.deepEqual(errorsOf(p), [code('invalid', 'site')]);
        p = await patch('jobs', [{ id: j.id, client: null }]);
        assert.deepEqual(errorsOf(p), [code('invalid', 'site')]);
        p = await patch('jobs', [{ id: j.id, site: { id: s2.id } }]);
        assert.deepEqual(errorsOf(p), [code('invalid', 'site')]);
        // Both together, or the site dropped, are fine.
        p = await patch('jobs', [{ id: j.id, client: { id: c2.id }, site: { id: s2.id } }]);
        assert.equal(p.status, 200, p.raw);
        p = await patch('jobs', [{ id: j.id, client: { id: c1.id }, site: null }]);
        assert.equal(p.status, 200, p.raw);
        assert.equal(p.body.jobs[0].site, null);
        // A site does not move to another client while a job names it.
        const j2 = await one('jobs', { title: 'on s1', client: { id: c1.id }, site: { id: s1.id } });
        p = await patch('sites', [{ id: s1.id, client: { id: c2.id } }]);
        assert.deepEqual(errorsOf(p), [code('conflict', 'client')]);
        // Deleting the site leaves the job without one.
        assert.equal((await call(t.app, a.token, 'DELETE', `/sites/${s1.id}`)).status, 200);
        const got = await call(t.app, a.token, 'GET', `/jobs/${j2.id}`);
        assert.equal(got.body.jobs[0].site, null);
      });

      it("copies the site's address, else the client's, when created without one; address: null means none", async () => {
        const here = { line1: '1 Site Rd', location: { lat: 53.1, lng: -1.2 } };
        const home = { line1: '9 Client St', city: 'York', location: { lat: 54, lng: -1 } };
        const c = await one('clients', { name: 'Copy', address: home });
        const s = await one('sites', { client: { id: c.id }, name: 'Has address', address: here });
        const bare = await one('sites', { client: { id: c.id }, name: 'No address' });
        const fromSite = await one('jobs', { title: 'a', client: { id: c.id }, site: { id: s.id } });
        assert.deepEqual(fromSite.address, here);
        const fromClient = await one('jobs', { title: 'b', client: { id: c.id }, site: { id: bare.id } });
        assert.deepEqual(fromClient.address, home);
        assert.deepEqual((await one('jobs', { title: 'c', client: { id: c.id } })).address, home);
        assert.deepEqual((await one('jobs', { title: 'd', client: { id: c.id }, address: null })).address, {});
        const own = { city: 'Own' };
        assert.deepEqual(
          (await one('jobs', { title: 'e', client: { id: c.id }, site: { id: s.id }, address: own })).address,
          own,
        );
        assert.deepEqual((await one('jobs', { title: 'f' })).address, {});
        // A copy: later changes to the site do not move the job.
        await patch('sites', [{ id: s.id, address: { line1: 'Moved' } }]);
        const again = await call(t.app, a.token, 'GET', `/jobs/${fromSite.id}`);
        assert.deepEqual(again.body.jobs[0].address, here);
      });
    });

    it("a job's site and the site's client, changed at once, never disagree", async () => {
      const c1 = await one('clients', { name: 'Race one' });
      const c2 = await one('clients', { name: 'Race two' });
      for (let round = 0; round < 8; round++) {
        const s = await one('sites', { client: { id: c1.id }, name: `Race ${round}` });
        const j = await one('jobs', { title: `Race ${round}`, client: { id: c1.id } });
        const [pj, ps] = await Promise.all([
          patch('jobs', [{ id: j.id, site: { id: s.id } }]),
          patch('sites', [{ id: s.id, client: { id: c2.id } }]),
        ]);
        // One of the two wins; never both.
        assert.ok(pj.status === 200 || ps.status === 200, `${pj.raw} | ${ps.raw}`);
        assert.ok(!(pj.status === 200 && ps.status === 200), `both passed: ${pj.raw} | ${ps.raw}`);
        const job = (await call(t.app, a.token, 'GET', `/jobs/${j.id}?fields=site,client`)).body.jobs[0];
        const site = (await call(t.app, a.token, 'GET', `/sites/${s.id}?fields=client`)).body.sites[0];
        if (job.site) assert.equal(site.client.id, job.client.id);
      }
    });

    describe('contacts', () => {
      it('creates with the users’ rules for email and phones; firstName and client required', async () => {
        const c = await one('clients', { name: 'People' });
        const k = await one('contacts', {
          client: { id: c.id },
          firstName: 'Sam',
          lastName: 'Reed',
          title: 'Manager',
          email: 'sam@example.com',
          phone: '+441130000000',
          mobile: '+447700900002',
        });
        assert.equal(k.isPrimary, false);
        assert.equal(k.lastName, 'Reed');
        const res = await post('contacts', [{ client: { id: c.id }, firstName: 'X', email: 'nope', mobile: '123' }]);
        assert.deepEqual(errorsOf(res).sort(), [code('invalid', 'email'), code('invalid', 'mobile')]);
        assert.deepEqual(errorsOf(await post('contacts', [{ lastName: 'Y' }])).sort(), [
          code('required', 'client'),
          code('required', 'firstName'),
        ]);
        const kb = await one(
          'contacts',
          { client: { id: (await one('clients', { name: 'B' }, b.token)).id }, firstName: 'B' },
          b.token,
        );
        await assertIsolated(t, a, b, 'contacts', kb.id, { firstName: 'stolen' });
      });

      it("isPrimary clears the client's other primary contact, as an event of its own", async () => {
        const c = await one('clients', { name: 'Primary' });
        const other = await one('clients', { name: 'Other' });
        const k1 = await one('contacts', { client: { id: c.id }, firstName: 'One', isPrimary: true });
        const k3 = await one('contacts', { client: { id: other.id }, firstName: 'Three', isPrimary: true });
        const k2 = await one('contacts', { client: { id: c.id }, firstName: 'Two', isPrimary: true });
        const list = async () =>
          (await call(t.app, a.token, 'GET', `/contacts?where=isPrimary = true&fields=firstName`)).body.contacts.map(
            (x: { id: number }) => x.id,
          );
        assert.deepEqual((await list()).sort(), ids([k2, k3]));
        const events = await call(
          t.app,
          a.token,
          'GET',
          `/events?where=collection = "contacts" and item.id = ${k1.id}&fields=type,changes`,
        );
        assert.equal(events.status, 200, events.raw);
        const updated = events.body.events.filter((e: { type: string }) => e.type === 'contacts.updated');
        assert.equal(updated.length, 1, events.raw);
        assert.deepEqual(updated[0].changes.isPrimary, { old: true, new: false });
        // A PATCH moving a primary contact to another client clears that client's primary.
        const p = await patch('contacts', [{ id: k2.id, client: { id: other.id } }]);
        assert.equal(p.status, 200, p.raw);
        assert.deepEqual(await list(), [k2.id]);
        // Unsetting is allowed: a client may have no primary contact.
        assert.equal((await patch('contacts', [{ id: k2.id, isPrimary: false }])).status, 200);
        assert.deepEqual(await list(), []);
      });

      it('a batch making two contacts of one client primary fails naming isPrimary, and changes nothing', async () => {
        const c = await one('clients', { name: 'Batch' });
        const k1 = await one('contacts', { client: { id: c.id }, firstName: 'Kept', isPrimary: true });
        const res = await post('contacts', [
          { client: { id: c.id }, firstName: 'A', isPrimary: true },
          { client: { id: c.id }, firstName: 'B', isPrimary: true },
        ]);
        assert.equal(res.status, 422, res.raw);
        assert.deepEqual(errorsOf(res), [code('conflict', 'isPrimary')]);
        const k2 = await one('contacts', { client: { id: c.id }, firstName: 'C' });
        const p = await patch('contacts', [
          { id: k2.id, isPrimary: true },
          { id: k1.id, isPrimary: true },
        ]);
        assert.deepEqual(errorsOf(p), [code('conflict', 'isPrimary')]);
        const got = await call(t.app, a.token, 'GET', `/contacts/${k1.id}`);
        assert.equal(got.body.contacts[0].isPrimary, true);
        // Two clients in one batch are fine.
        const c2 = await one('clients', { name: 'Batch 2' });
        const ok = await post('contacts', [
          { client: { id: c.id }, firstName: 'D', isPrimary: true },
          { client: { id: c2.id }, firstName: 'E', isPrimary: true },
        ]);
        assert.equal(ok.status, 200, ok.raw);
      });

      it('concurrent writes never leave two primary contacts of one client', async () => {
        const c = await one('clients', { name: 'Race' });
        const made = await post(
          'contacts',
          Array.from({ length: 6 }, (_, i) => ({ client: { id: c.id }, firstName: `R${i}` })),
        );
        const all = made.body.contacts as { id: number }[];
        const answers = await Promise.all(all.map((k) => patch('contacts', [{ id: k.id, isPrimary: true }])));
        assert.deepEqual(
          answers.map((r) => r.status),
          all.map(() => 200),
          answers.map((r) => r.raw).join(' | '),
        );
        const primaries = await call(t.app, a.token, 'GET', `/contacts?where=client.id = ${c.id} and isPrimary = true`);
        assert.equal(primaries.body.contacts.length, 1, primaries.raw);
      });
    });

    describe('roles', () => {
      it('Employees read and write; a Contractor reads only the sites and contacts of clients of their jobs', async () => {
        const emp = await addUser(t, a, 'employee');
        const con = await addUser(t, a, 'contractor');
        const mine = await one('clients', { name: 'Mine' });
        const theirs = await one('clients', { name: 'Not mine' });
        const sm = await one('sites', { client: { id: mine.id }, name: 'Mine site' }, emp.token);
        const st = await one('sites', { client: { id: theirs.id }, name: 'Other site' }, emp.token);
        const km = await one('contacts', { client: { id: mine.id }, firstName: 'Mine' }, emp.token);
        await one('contacts', { client: { id: theirs.id }, firstName: 'Other' }, emp.token);
        // Before any visit, the contractor sees none.
        assert.deepEqual((await call(t.app, con.token, 'GET', '/sites')).body.sites, []);
        const job = await one('jobs', { title: 'Work', client: { id: mine.id } });
        await one('visits', {
          job: { id: job.id },
          user: { id: con.id },
          label: 'Go',
          startTime: '2030-01-01T09:00:00Z',
          endTime: '2030-01-01T10:00:00Z',
        });
        const sites = await call(t.app, con.token, 'GET', '/sites');
        assert.equal(sites.status, 200, sites.raw);
        assert.deepEqual(ids(sites.body.sites), [sm.id]);
        assert.equal(sites.body.metadata.recordsCount, 1);
        assert.deepEqual(ids((await call(t.app, con.token, 'GET', '/contacts')).body.contacts), [km.id]);
        assert.equal((await call(t.app, con.token, 'GET', `/sites/${st.id}`)).status, 404);
        assert.equal((await post('sites', [{ client: { id: mine.id }, name: 'x' }], con.token)).status, 403);
        assert.equal((await patch('contacts', [{ id: km.id, firstName: 'x' }], con.token)).status, 403);
      });
    });
  });
}
