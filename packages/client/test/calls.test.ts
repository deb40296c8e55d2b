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

    test('summary: groups and aggregates by the server, with where and paging; a bad modifier is a typed 400', async () => {
      await fsm.create('jobs', [
        { title: 'Sum A', priority: 'urgent' },
        { title: 'Sum B', priority: 'urgent' },
        { title: 'Sum C', priority: 'normal' },
      ]);
      const all = await fsm.summary('jobs', {
        groupBy: ['priority'],
        aggregate: ['count'],
        where: ['title', '~', 'Sum '],
      });
      assert.deepEqual(all.summary, [
        { group: { priority: 'normal' }, count: 1 },
        { group: { priority: 'urgent' }, count: 2 },
      ]);
      assert.equal(all.metadata.recordsCount, 2);
      const second = await fsm.summary('jobs', {
        groupBy: ['priority'],
        where: ['title', '~', 'Sum '],
        page: 2,
        recordsPerPage: 1,
      });
      assert.deepEqual(second.summary, [{ group: { priority: 'urgent' }, count: 2 }]);
      await assert.rejects(
        fsm.summary('jobs', { aggregate: ['sum(title)'] }),
        (e: FieldServiceError) => e instanceof FieldServiceError && e.status === 400 && /sum\(title\)/.test(e.message),
      );
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

    test('If-Match from the ETag read with the item: a change made since is a 412 typed error, nothing changes', async () => {
      const [created] = await fsm.create('jobs', [{ title: 'Service the boiler' }]);
      const seen = await fsm.get('jobs', created.id);
      assert.match(seen.etag, /^"\d+\.\d+"$/);
      assert.equal(seen.item.title, 'Service the boiler');
      // Someone else changes the job after we read it.
      const other = await signedInClient(s);
      await other.updateItem('jobs', created.id, { title: 'Service the boiler (urgent)' });
      requests.length = 0;
      await assert.rejects(
        fsm.updateItem('jobs', created.id, { priority: 'low' }, { ifMatch: seen.etag }),
        (e: FieldServiceError) => e instanceof FieldServiceError && e.status === 412 && e.code === 1080,
      );
      assert.equal(requests[0].headers.get('if-match'), seen.etag);
      await assert.rejects(
        fsm.deleteItem('jobs', created.id, { ifMatch: seen.etag }),
        (e: FieldServiceError) => e.status === 412 && e.code === 1080,
      );
      const now = await fsm.get('jobs', created.id, { fields: ['title', 'priority'] });
      assert.deepEqual(now.item, { id: created.id, title: 'Service the boiler (urgent)', priority: 'normal' });
      assert.notEqual(now.etag, seen.etag);

      // Read again: the change applies, and its answer carries the next ETag for the next change.
      const changed = await fsm.updateItem('jobs', created.id, { priority: 'low' }, { ifMatch: now.etag });
      assert.equal(changed.item.priority, 'low');
      assert.equal(changed.item.title, 'Service the boiler (urgent)'); // the default fields, all there
      assert.notEqual(changed.etag, now.etag);
      const again = await fsm.updateItem('jobs', created.id, { priority: 'high' }, { ifMatch: changed.etag });
      const deleted = await fsm.deleteItem('jobs', created.id, { ifMatch: again.etag });
      assert.deepEqual(deleted, { id: created.id });
    });

    test('the ETag travels with any copy of what was read: a stale one is refused however the item was copied', async () => {
      const [created] = await fsm.create('jobs', [{ title: 'Replace the valve' }]);
      const read = await fsm.get('jobs', created.id);
      // What an application does with what it read: spread it, clone it, store it as JSON, or list
      // the items and keep the ETag it read beside them.
      const listed = [];
      for await (const job of fsm.list('jobs', { where: ['id', '=', created.id] })) listed.push(job);
      const copies = [
        { ...read },
        structuredClone(read),
        JSON.parse(JSON.stringify(read)) as typeof read,
        { item: { ...listed[0] }, etag: read.etag },
      ];
      const other = await signedInClient(s);
      await other.updateItem('jobs', created.id, { title: 'Replace the valve and the seal' });
      for (const [i, copy] of copies.entries()) {
        assert.equal(copy.etag, read.etag, `copy ${i}`);
        await assert.rejects(
          fsm.updateItem('jobs', copy.item.id, { title: `${copy.item.title} (copy ${i})` }, { ifMatch: copy.etag }),
          (e: FieldServiceError) => e.status === 412 && e.code === 1080,
          `copy ${i}`,
        );
      }
      // Nothing was overwritten: the other person's change stands.
      assert.equal((await fsm.get('jobs', created.id)).item.title, 'Replace the valve and the seal');
      // Without ifMatch the change is unconditional (the caller's choice): it applies.
      const forced = await fsm.updateItem('jobs', created.id, { title: 'Forced' });
      assert.equal(forced.item.title, 'Forced');
    });

    test("the caller's Idempotency-Key: a repeat from another client instance (after a crash) is answered, not done again", async () => {
      const key = `create-leak-${s.tenant.accountId}-${Date.now()}`;
      requests.length = 0;
      const [first] = await fsm.create('jobs', [{ title: 'Keyed leak' }], { idempotencyKey: key });
      assert.equal(requests.at(-1)!.headers.get('idempotency-key'), key);
      // The process died before it recorded the answer; a new one repeats the write with the saved key.
      const restarted = await signedInClient(s);
      const [again] = await restarted.create('jobs', [{ title: 'Keyed leak' }], { idempotencyKey: key });
      assert.deepEqual(again, first);
      const all = [];
      for await (const j of fsm.list('jobs', { where: ['title', '=', 'Keyed leak'] })) all.push(j);
      assert.equal(all.length, 1);
      // The same key for another body is refused: a key names one write.
      await assert.rejects(
        restarted.create('jobs', [{ title: 'Another leak' }], { idempotencyKey: key }),
        (e: FieldServiceError) => e.status === 422 && e.code === 1249,
      );

      // Updates and deletions, batch and single, take the caller's key too.
      const upKey = `${key}-update`;
      const [up1] = await fsm.update('jobs', [{ id: first.id, priority: 'high' }], { idempotencyKey: upKey });
      await fsm.updateItem('jobs', first.id, { priority: 'low' });
      const [up2] = await restarted.update('jobs', [{ id: first.id, priority: 'high' }], { idempotencyKey: upKey });
      assert.deepEqual(up2, up1); // the first answer, replayed: the update was not made again
      assert.equal((await fsm.get('jobs', first.id)).item.priority, 'low');
      const itemKey = `${key}-item`;
      const { item: changed } = await fsm.updateItem('jobs', first.id, { title: 'Keyed' }, { idempotencyKey: itemKey });
      assert.equal(requests.at(-1)!.headers.get('idempotency-key'), itemKey);
      assert.deepEqual(
        (await restarted.updateItem('jobs', first.id, { title: 'Keyed' }, { idempotencyKey: itemKey })).item,
        changed,
      );
      const delKey = `${key}-delete`;
      assert.deepEqual(await fsm.deleteItem('jobs', first.id, { idempotencyKey: delKey }), { id: first.id });
      assert.deepEqual(await restarted.deleteItem('jobs', first.id, { idempotencyKey: delKey }), { id: first.id });
      const [job] = await fsm.create('jobs', [{ title: 'Batch-deleted' }]);
      const batchKey = `${key}-batch`;
      assert.deepEqual(await fsm.delete('jobs', [job.id], { idempotencyKey: batchKey }), [{ id: job.id }]);
      assert.deepEqual(await restarted.delete('jobs', [job.id], { idempotencyKey: batchKey }), [{ id: job.id }]);
      // Without a key of its own, each call still gets one (its retries share it).
      requests.length = 0;
      await fsm.create('jobs', [{ title: 'Unkeyed' }]);
      await fsm.create('jobs', [{ title: 'Unkeyed' }]);
      const keys = requests.map((r) => r.headers.get('idempotency-key'));
      assert.ok(keys.every(Boolean) && keys[0] !== keys[1], String(keys));
    });

    test('answers without fields type their default fields as present; fields answer what they name', async () => {
      const [job] = await fsm.create('jobs', [{ title: 'Typed' }]);
      // Each of these compiles only because the field is typed as present (strict: not `| undefined`).
      const title: string = job.title;
      const priority: 'low' | 'normal' | 'high' | 'urgent' = job.priority;
      const created: string = job.created;
      const client: { id: number } | null = job.client;
      assert.deepEqual([title, priority, typeof created, client], ['Typed', 'normal', 'string', null]);
      const { item } = await fsm.get('jobs', job.id);
      const reference: string = item.reference;
      assert.match(reference, /^J-\d+$/);
      const { item: picked } = await fsm.get('jobs', job.id, { fields: ['dueDate'] });
      const due: string | null = picked.dueDate;
      assert.deepEqual(picked, { id: job.id, dueDate: due });
      assert.equal(due, null);
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
