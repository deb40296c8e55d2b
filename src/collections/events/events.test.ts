import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, addUser, suiteWithTenants, call, skipUnless } from '../../../test/helpers.js';
import { registry } from '../index.js';

type Ev = {
  id: number;
  type: string;
  collection: string;
  item: { id: number };
  changes: Record<string, { old: unknown; new: unknown }> | null;
  data: Record<string, unknown>;
  actor: { id: number } | null;
  clientId: string | null;
  occurred: string;
};

for (const dialect of DIALECTS) {
  describe(`events (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect, { deliveries: false });

    /** Every event of the tenant after `since`, in id order. */
    const eventsAfter = async (since: number, token = a.token): Promise<Ev[]> => {
      const res = await call(
        t.app,
        token,
        'GET',
        `/events?where=${encodeURIComponent(`id > ${since}`)}&recordsPerPage=1000`,
      );
      assert.equal(res.status, 200, res.raw);
      return res.body.events;
    };
    const lastId = async (token = a.token) => {
      const res = await call(t.app, token, 'GET', '/events?sort=-id&recordsPerPage=1');
      return (res.body.events[0]?.id as number | undefined) ?? 0;
    };

    it('records account creation with no actor (the operator)', async () => {
      const all = await eventsAfter(0);
      assert.ok(
        all.some(
          (e) => e.type === 'users.created' && e.item.id === a.adminId && e.actor === null && e.clientId === null,
        ),
      );
      assert.ok(all.filter((e) => e.type === 'statuses.created').length >= 4);
      // Another account's events never show.
      const theirs = await eventsAfter(0, b.token);
      assert.ok(!theirs.some((e) => all.some((x) => x.id === e.id)));
    });

    it('records create, update and delete through the API, with actor, client and changes', async () => {
      const since = await lastId();
      const c = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Evt Client' }] })).body.clients[0];
      await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: c.id, name: 'Renamed' }] });
      await call(t.app, a.token, 'DELETE', `/clients/${c.id}`);
      const evs = await eventsAfter(since);
      assert.deepEqual(
        evs.map((e) => e.type),
        ['clients.created', 'clients.updated', 'clients.deleted'],
      );
      assert.ok(evs[0].id < evs[1].id && evs[1].id < evs[2].id);
      const [created, updated, deleted] = evs;
      assert.deepEqual(Object.keys(created), [
        'id',
        'type',
        'collection',
        'item',
        'changes',
        'data',
        'actor',
        'clientId',
        'occurred',
      ]);
      assert.deepEqual(
        {
          collection: created.collection,
          item: created.item,
          changes: created.changes,
          actor: created.actor,
          clientId: created.clientId,
        },
        { collection: 'clients', item: { id: c.id }, changes: null, actor: { id: a.adminId }, clientId: a.clientId },
      );
      assert.equal(created.data.name, 'Evt Client');
      assert.match(created.occurred, /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/);
      assert.deepEqual(updated.changes, { name: { old: 'Evt Client', new: 'Renamed' } });
      assert.equal(updated.data.name, 'Renamed');
      assert.equal(deleted.data.name, 'Renamed', 'a deleted item as it was');
      assert.equal(deleted.changes, null);
      // The usual modifiers.
      const one = await call(
        t.app,
        a.token,
        'GET',
        `/events?where=${encodeURIComponent(`type = 'clients.updated' and item.id = ${c.id}`)}&fields=type`,
      );
      assert.deepEqual(one.body.events, [{ id: updated.id, type: 'clients.updated' }]);
      assert.equal((await call(t.app, a.token, 'GET', `/events/${created.id}`)).body.events[0].type, 'clients.created');
    });

    it('records a rule side effect: the old default status losing isDefault', async () => {
      const since = await lastId();
      const old = (await call(t.app, a.token, 'GET', `/statuses?where=${encodeURIComponent('isDefault = true')}`)).body
        .statuses[0];
      const res = await call(t.app, a.token, 'POST', '/statuses', { statuses: [{ label: 'Triage', isDefault: true }] });
      assert.equal(res.status, 200, res.raw);
      const evs = await eventsAfter(since);
      assert.deepEqual(evs.map((e) => e.type).sort(), ['statuses.created', 'statuses.updated']);
      const lost = evs.find((e) => e.type === 'statuses.updated')!;
      assert.equal(lost.item.id, old.id);
      assert.deepEqual(lost.changes, { isDefault: { old: true, new: false } });
    });

    it('records database cascades: deleting a job deletes its visits', async () => {
      const job = (await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Cascade' }] })).body.jobs[0];
      const visit = {
        job: { id: job.id },
        label: 'V',
        startTime: '2030-01-01T09:00:00Z',
        endTime: '2030-01-01T10:00:00Z',
      };
      const visits = (await call(t.app, a.token, 'POST', '/visits', { visits: [visit, visit] })).body.visits.map(
        (v: { id: number }) => v.id,
      );
      const since = await lastId();
      assert.equal((await call(t.app, a.token, 'DELETE', `/jobs/${job.id}`)).status, 200);
      const evs = await eventsAfter(since);
      assert.deepEqual(
        evs
          .filter((e) => e.type === 'visits.deleted')
          .map((e) => e.item.id)
          .sort(),
        [...visits].sort(),
      );
      assert.equal(evs.filter((e) => e.type === 'jobs.deleted' && e.item.id === job.id).length, 1);
    });

    it('records nothing for a PATCH that changes nothing, or for a failed batch', async () => {
      const c = (await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Same' }] })).body.clients[0];
      const since = await lastId();
      assert.equal(
        (await call(t.app, a.token, 'PATCH', '/clients', { clients: [{ id: c.id, name: 'Same' }] })).status,
        200,
      );
      const failed = await call(t.app, a.token, 'POST', '/clients', { clients: [{ name: 'Good' }, { name: 12 }] });
      assert.equal(failed.status, 422);
      // Failing inside the transaction (a unique label after a good item) too.
      const dup = await call(t.app, a.token, 'POST', '/statuses', {
        statuses: [{ label: 'Fresh one' }, { label: 'New' }],
      });
      assert.equal(dup.status, 422);
      assert.deepEqual(await eventsAfter(since), []);
    });

    it('never shows a secret: passwords, signed links, webhook secrets', async () => {
      const since = await lastId();
      await addUser(t, a, 'employee', {
        login: `pw${Date.now()}`,
        newPassword: 'a secret password 1',
        newPasswordConfirm: 'a secret password 1',
      });
      t.config.webhooksAllowPrivateUrls = true;
      const hook = await call(t.app, a.token, 'POST', '/webhooks', {
        webhooks: [{ url: 'http://127.0.0.1:9/hook', events: ['*'] }],
      });
      assert.equal(hook.status, 200, hook.raw);
      const secret = hook.body.webhooks[0].secret as string;
      assert.match(secret, /^whsec_/);
      const rotated = await call(t.app, a.token, 'POST', `/webhooks/${hook.body.webhooks[0].id}/rotateSecret`);
      assert.equal(rotated.status, 200, rotated.raw);
      const file = await t.app.inject({
        method: 'POST',
        url: '/files/upload?name=a.txt',
        payload: Buffer.from('hello'),
        headers: { authorization: `Bearer ${a.token}`, 'x-version': '1.0', 'content-type': 'text/plain' },
      });
      assert.equal(file.statusCode, 200, file.body);
      const text = JSON.stringify(await eventsAfter(since));
      for (const s of ['a secret password 1', secret, rotated.body.webhooks[0].secret, 'whsec_', 'downloadUrl'])
        assert.ok(!text.includes(s), s);
      assert.ok(text.includes('files.created') && text.includes('webhooks.created') && text.includes('users.created'));
      // The secret is shown in the create answer only.
      const got = await call(t.app, a.token, 'GET', `/webhooks/${hook.body.webhooks[0].id}?fields=*`);
      assert.equal(got.body.webhooks[0].secret, undefined);
    });

    it('is read-only, needs events.read, and shows only the collections the token and role may read', async () => {
      for (const method of ['POST', 'PATCH', 'DELETE']) {
        const res = await call(t.app, a.token, method, '/events', { events: [{}] });
        assert.equal(res.status, 405, method);
        assert.equal(res.headers.allow, 'GET');
      }
      assert.equal((await call(t.app, a.token, 'DELETE', '/events/1')).status, 405);
      assert.ok(registry.permissions.includes('events.read') && !registry.permissions.includes('events.write'));
      assert.ok(registry.permissions.includes('webhooks.read') && registry.permissions.includes('webhooks.write'));
      assert.ok(!registry.permissions.some((p) => p.startsWith('deliveries.')));

      const noEvents = await a.tokenFor(a.adminId, ['jobs.read']);
      assert.equal((await call(t.app, noEvents, 'GET', '/events')).status, 403);
      const contractor = await addUser(t, a, 'contractor');
      // PRODUCT §13: Contractors read events, only of their own work (test/contractor-events.test.ts).
      const byContractor = await call(t.app, contractor.token, 'GET', '/events');
      assert.equal(byContractor.status, 200);
      assert.ok(byContractor.body.events.every((e: { collection: string }) => e.collection !== 'webhooks'));

      await call(t.app, a.token, 'POST', '/jobs', { jobs: [{ title: 'Seen by jobs.read' }] });
      const jobsOnly = await a.tokenFor(a.adminId, ['events.read', 'jobs.read']);
      const seen = new Set((await eventsAfter(0, jobsOnly)).map((e) => e.collection));
      assert.deepEqual([...seen], ['jobs']);
      // An Employee's role never reads webhooks: none of their events show, whatever the token.
      const employee = await addUser(t, a, 'employee');
      const byEmployee = new Set((await eventsAfter(0, employee.token)).map((e) => e.collection));
      assert.ok(byEmployee.has('jobs') && byEmployee.has('users'));
      assert.ok(!byEmployee.has('webhooks'));
      assert.ok(new Set((await eventsAfter(0)).map((e) => e.collection)).has('webhooks'));
    });
  });
}
