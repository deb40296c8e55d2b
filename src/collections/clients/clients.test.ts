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
  type Tenant,
} from '../../../test/helpers.js';
import { VALIDATION } from '../../errors.js';

const code = (kind: keyof typeof VALIDATION, field: string) => `${VALIDATION[kind].code}:${field}`;

for (const dialect of DIALECTS) {
  describe(`clients (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);

    const create = (tenant: Tenant, items: unknown[], token = tenant.token) =>
      call(t.app, token, 'POST', '/clients', { clients: items });
    const address = { line1: '1 High St', city: 'Leeds', postcode: 'LS1 1AA', country: 'GB' };

    it('creates, reads, lists, patches and deletes', async () => {
      const res = await create(a, [
        {
          name: 'Jane Doe',
          companyName: 'Doe Ltd',
          email: 'jane@doe.test',
          mobile: '+447700900001',
          address,
          notes: 'Gate code 1234',
        },
      ]);
      assert.equal(res.status, 200, res.raw);
      const c = res.body.clients[0];
      assert.deepEqual(
        { ...c, created: undefined, modified: undefined },
        {
          id: c.id,
          name: 'Jane Doe',
          companyName: 'Doe Ltd',
          email: 'jane@doe.test',
          phone: null,
          mobile: '+447700900001',
          address,
          notes: 'Gate code 1234',
          emailOptOut: false,
          account: { id: a.accountId },
          deleted: false,
          customFields: {},
          created: undefined,
          modified: undefined,
        },
      );
      assert.deepEqual((await call(t.app, a.token, 'GET', `/clients/${c.id}?fields=address`)).body.clients, [
        { id: c.id, address },
      ]);
      const listed = await call(t.app, a.token, 'GET', '/clients');
      assert.deepEqual(
        listed.body.clients.map((x: { id: number }) => x.id),
        [c.id],
      );
      const p = await call(t.app, a.token, 'PATCH', `/clients/${c.id}`, {
        clients: [{ phone: '+441130000000', deleted: true }],
      });
      assert.equal(p.status, 200, p.raw);
      assert.equal(p.body.clients[0].phone, '+441130000000');
      assert.equal(p.body.clients[0].deleted, true);
      const d = await call(t.app, a.token, 'DELETE', '/clients', { clients: [{ id: c.id }] });
      assert.deepEqual(d.body, {
        result: 'success',
        clients: [{ id: c.id }],
        metadata: { receivedItemsCount: 1, validItems: [0], invalidItems: [] },
      });
      assert.equal((await call(t.app, a.token, 'GET', `/clients/${c.id}`)).status, 404);
    });

    it('gives an empty address and null optional members by default', async () => {
      const c = (await create(a, [{ name: 'Min' }])).body.clients[0];
      assert.deepEqual(c.address, {});
      assert.equal(c.email, null);
      assert.equal(c.deleted, false);
    });

    it('writes the address as a whole: left-out members become empty', async () => {
      const c = (await create(a, [{ name: 'Addr', address }])).body.clients[0];
      const p = await call(t.app, a.token, 'PATCH', '/clients', {
        clients: [{ id: c.id, address: { line1: '2 Low Rd', region: 'Yorks' } }],
      });
      assert.deepEqual(p.body.clients[0].address, { line1: '2 Low Rd', region: 'Yorks' });
      const q = await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: c.id, name: 'Renamed' }] });
      assert.deepEqual(q.body.clients[0].address, { line1: '2 Low Rd', region: 'Yorks' });
    });

    it('requires name and refuses unknown, read-only and malformed members', async () => {
      assert.deepEqual(errorsOf(await create(a, [{ email: 'x@y.test' }])), [code('required', 'name')]);
      const res = await create(a, [
        {
          name: 'X',
          email: 'nope',
          phone: '123',
          address: { street: 'x' },
          modified: '2020-01-01T00:00:00Z',
          vip: true,
        },
      ]);
      assert.deepEqual(
        errorsOf(res).sort(),
        [
          code('invalid', 'email'),
          code('invalid', 'phone'),
          code('readOnly', 'modified'),
          code('unknown', 'address.street'),
          code('unknown', 'vip'),
        ].sort(),
      );
      const id = (await create(a, [{ name: 'Y' }])).body.clients[0].id;
      const p = await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id, name: '', created: 'x' }] });
      assert.deepEqual(errorsOf(p).sort(), [code('invalid', 'name'), code('readOnly', 'created')]);
    });

    it('filters, sorts and selects on its fields, address members included', async () => {
      await create(a, [
        { name: 'Zed', address: { city: 'York' } },
        { name: 'Amy', address: { city: 'Yeovil' } },
        { name: 'Bob', address: { city: 'Bath' } },
      ]);
      const res = await call(t.app, a.token, 'GET', '/clients?where=address.city~"y"&sort=-name&fields=name,address');
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(
        res.body.clients.map((c: { name: string }) => c.name),
        ['Zed', 'Amy'],
      );
      const byCity = await call(
        t.app,
        a.token,
        'GET',
        '/clients?where=address.city!=null&sort=address.city&fields=name',
      );
      assert.deepEqual(byCity.body.clients.map((c: { name: string }) => c.name).slice(0, 3), ['Bob', 'Amy', 'Zed']);
      assert.equal((await call(t.app, a.token, 'GET', '/clients?where=colour="x"')).status, 400);
    });

    it('applies a batch all or nothing', async () => {
      await assertAtomicBatch(t, a, 'clients', { name: 'Good' }, { name: 'Bad', email: 'bad' });
    });

    it("isolates accounts: A cannot see or change B's clients", async () => {
      const c = (await create(b, [{ name: 'B client' }])).body.clients[0];
      await assertIsolated(t, a, b, 'clients', c.id, { name: 'Stolen' });
      const listed = await call(t.app, a.token, 'GET', `/clients?where=id=${c.id}`);
      assert.equal(listed.body.metadata.recordsCount, 0);
    });

    it('lets Employees read and write; Contractors neither', async () => {
      const emp = await addUser(t, a, 'employee');
      const con = await addUser(t, a, 'contractor');
      const res = await create(a, [{ name: 'By employee' }], emp.token);
      assert.equal(res.status, 200, res.raw);
      const id = res.body.clients[0].id;
      assert.equal((await call(t.app, emp.token, 'PATCH', '/clients', { clients: [{ id, notes: 'ok' }] })).status, 200);
      assert.equal((await call(t.app, emp.token, 'DELETE', `/clients/${id}`)).status, 200);
      assert.equal((await call(t.app, con.token, 'GET', '/clients')).status, 403);
      assert.equal((await create(a, [{ name: 'By contractor' }], con.token)).status, 403);
    });
  });
}
