import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FieldService, FieldServiceError } from '@fieldservice/client';
import { DIALECTS, serve, signedInClient, skipUnless, type Served } from './fixture.js';

for (const dialect of DIALECTS) {
  describe(`client package: every kind of call (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let s: Served;
    let fsm: FieldService;
    const requests: Request[] = [];

    before(async () => {
      s = await serve(dialect);
      fsm = await signedInClient(s, {
        fetch: (r) => {
          requests.push(r);
          return fetch(r);
        },
      });
    });
    after(() => s?.close());

    test('list iterates over every page with where, fields and sort; X-Version on every request', async () => {
      const titles = ['Pipe A', "Pipe O'Brien", 'Pipe C', 'Pipe D', 'Pipe E', 'Pipe F', 'Pipe G', 'Boiler'];
      await fsm.create(
        'jobs',
        titles.map((title, i) => ({ title, priority: i % 2 && title !== 'Boiler' ? 'high' : 'low' })),
      );
      requests.length = 0;
      const got = [];
      for await (const job of fsm.list('jobs', {
        where: ['title', '~', 'pipe'],
        fields: ['title', 'priority'],
        sort: ['-title'],
        recordsPerPage: 3,
      }))
        got.push(job);
      assert.deepEqual(
        got.map((j) => j.title),
        titles
          .filter((t) => t.startsWith('Pipe'))
          .sort()
          .reverse(),
      );
      assert.deepEqual(Object.keys(got[0]).sort(), ['id', 'priority', 'title']);
      assert.deepEqual(
        requests.map((r) => new URL(r.url).searchParams.get('page')),
        ['1', '2', '3'],
      );
      assert.ok(
        requests.every(
          (r) => r.headers.get('x-version') === '1.0' && r.method === 'GET' && !r.headers.has('idempotency-key'),
        ),
      );

      // and/or, a quote inside a value, an association id, a date.
      const high = [];
      for await (const j of fsm.list('jobs', {
        where: {
          and: [
            {
              or: [
                ['title', '=', "Pipe O'Brien"],
                ['title', '=', 'Boiler'],
              ],
            },
            ['priority', '=', 'high'],
            ['created', '<', new Date(Date.now() + 60_000)],
          ],
        },
        fields: ['title'],
      }))
        high.push(j.title);
      assert.deepEqual(high, ["Pipe O'Brien"]);
      const none = [];
      for await (const j of fsm.list('jobs', { where: ['status.id', '=', 999999] })) none.push(j);
      assert.deepEqual(none, []);
    });

    test('create, update and delete answer the items; a failure throws the envelope with each failed index', async () => {
      const [client] = await fsm.create('clients', [{ name: 'Acme Ltd', email: 'ops@acme.example' }]);
      const [job] = await fsm.create('jobs', [{ title: 'Fix the tap', client: { id: client.id } }]);
      assert.equal(job.title, 'Fix the tap');
      assert.deepEqual(job.client, { id: client.id });

      const before = await count('jobs');
      // Item 1 misses its title, item 2 has a priority that is no enum member: nothing is saved.
      const bad = [{ title: 'ok' }, { priority: 'low' }, { title: 'x', priority: 'asap' }] as unknown as Parameters<
        typeof fsm.create<'jobs'>
      >[1];
      const err = await fsm.create('jobs', bad).then(
        () => assert.fail('created'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof FieldServiceError);
      assert.equal(err.status, 422);
      assert.equal(err.code, 1040);
      assert.deepEqual(
        err.failures.map((f) => [f.index, f.errors.map((e) => `${e.code}:${e.field}`)]),
        [
          [1, ['1040:title']],
          [2, ['1041:priority']],
        ],
      );
      assert.deepEqual(err.metadata, { receivedItemsCount: 3, validItems: [0], invalidItems: [1, 2] });
      assert.equal(await count('jobs'), before);

      const [updated] = await fsm.update('jobs', [{ id: job.id, priority: 'urgent' }]);
      assert.equal(updated.priority, 'urgent');
      await assert.rejects(
        fsm.update('jobs', [
          { id: job.id, title: 'a' },
          { id: 999999, title: 'b' },
        ]),
        (e: FieldServiceError) =>
          e.status === 422 &&
          e.failures.length === 1 &&
          e.failures[0].index === 1 &&
          e.failures[0].errors[0].code === 1047,
      );

      const [deleted] = await fsm.delete('jobs', [job]);
      assert.equal(deleted.id, job.id);
      await assert.rejects(
        fsm.get('jobs', job.id),
        (e: FieldServiceError) => e.status === 404 && e.code === 1031 && e.type === 'client',
      );
    });

    test('If-Match from the ETag of a read item: a change made since is a 412 typed error, nothing changes', async () => {
      const [created] = await fsm.create('jobs', [{ title: 'Service the boiler' }]);
      const seen = await fsm.get('jobs', created.id);
      assert.match(fsm.etag(seen)!, /^"\d+\.\d+"$/);
      // Someone else changes the job after we read it.
      const other = await signedInClient(s);
      await other.updateItem('jobs', created.id, { title: 'Service the boiler (urgent)' });
      requests.length = 0;
      await assert.rejects(
        fsm.updateItem('jobs', seen, { priority: 'low' }),
        (e: FieldServiceError) => e.status === 412 && e.code === 1080,
      );
      assert.equal(requests[0].headers.get('if-match'), fsm.etag(seen));
      await assert.rejects(fsm.deleteItem('jobs', seen), (e: FieldServiceError) => e.status === 412);
      const now = await fsm.get('jobs', created.id, { fields: ['title', 'priority'] });
      assert.deepEqual(now, { id: created.id, title: 'Service the boiler (urgent)', priority: 'normal' });

      // Read again: the change applies, and its answer carries the next ETag for the next change.
      const changed = await fsm.updateItem('jobs', now, { priority: 'low' });
      assert.equal(changed.priority, 'low');
      assert.notEqual(fsm.etag(changed), fsm.etag(now));
      const deleted = await fsm.deleteItem('jobs', changed);
      assert.equal(deleted.id, created.id);
    });

    test('the typed openapi-fetch client is there for any operation, X-Version included', async () => {
      const { data, response } = await fsm.api.GET('/statuses', {
        params: { query: { where: "group = 'new'", fields: 'label' } },
      });
      assert.equal(response.status, 200);
      assert.deepEqual(
        data!.statuses.map((x) => x.label),
        ['New'],
      );
      const ping = await fsm.api.GET('/users/{id}', { params: { path: { id: s.tenant.adminId } } });
      assert.equal(ping.data!.users[0].id, s.tenant.adminId);
    });

    async function count(collection: 'jobs') {
      const { data } = await fsm.api.GET(`/${collection}`, { params: { query: { recordsPerPage: 1 } } });
      return data!.metadata.recordsCount;
    }
  });
}
