import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ChangeEvent, FieldService } from '@fieldservice/client';
import { DIALECTS, serve, signedInClient, skipUnless, type Served } from './fixture.js';

for (const dialect of DIALECTS) {
  describe(`client package: events.follow (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let s: Served;
    let fsm: FieldService;
    const eventRequests: URL[] = [];

    before(async () => {
      s = await serve(dialect);
      fsm = await signedInClient(s, {
        fetch: (r) => {
          if (new URL(r.url).pathname === '/events') eventRequests.push(new URL(r.url));
          return fetch(r);
        },
      });
    });
    after(() => s?.close());

    /** The account's event ids as the database has them, in order. */
    const storedIds = async () =>
      (
        await s.t.database.db
          .selectFrom('events')
          .select('id')
          .where('account_id', '=', s.tenant.accountId)
          .orderBy('id')
          .execute()
      ).map((r) => Number(r.id));

    test('every event in id order, paging through the backlog, then each new one as it commits; onCursor after each; abort ends it', async () => {
      await fsm.create('jobs', [{ title: 'Backlog 1' }, { title: 'Backlog 2' }, { title: 'Backlog 3' }]);
      const ac = new AbortController();
      const seen: number[] = [];
      const cursors: number[] = [];
      let lastId = Infinity;
      const writers = (async () => {
        // Changes committed while the loop runs, several at once: none may be passed over.
        for (let i = 0; i < 4; i++)
          await Promise.all([
            fsm.create('clients', [{ name: `Client ${i}` }]),
            fsm.create('jobs', [{ title: `Live ${i}` }]),
          ]);
        lastId = (await storedIds()).at(-1)!;
        if ((cursors.at(-1) ?? 0) >= lastId) ac.abort();
      })();
      const guard = setTimeout(() => ac.abort(), 30_000);
      eventRequests.length = 0;
      for await (const event of fsm.events.follow({
        signal: ac.signal,
        pollIntervalMs: 20,
        recordsPerPage: 2,
        onCursor: (id) => {
          // Called once the loop body for the event has finished, never before.
          assert.equal(id, seen.at(-1));
          cursors.push(id);
          if (id >= lastId) ac.abort();
        },
      })) {
        assert.ok(event.id > (seen.at(-1) ?? 0), 'in id order');
        seen.push(event.id);
      }
      clearTimeout(guard);
      await writers;
      assert.deepEqual(seen, await storedIds(), 'every event, once each, none missed');
      assert.deepEqual(cursors, seen);
      // The backlog was read two at a time, each request after the last id yielded.
      assert.ok(eventRequests.length >= seen.length / 2, `${eventRequests.length} requests`);
      assert.deepEqual(
        eventRequests.slice(0, 3).map((u) => [u.searchParams.get('where'), u.searchParams.get('sort')]),
        [
          ['id > 0', 'id'],
          [`id > ${seen[1]}`, 'id'],
          [`id > ${seen[3]}`, 'id'],
        ],
      );
    });

    test('resumes after a saved cursor with a filter; typed by type; an event whose body broke out comes again', async () => {
      const cursor = (await storedIds()).at(-1)!;
      const [client] = await fsm.create('clients', [{ name: 'Acme Ltd' }]);
      await fsm.create('jobs', [{ title: 'Not a client' }]);
      await fsm.updateItem('clients', client.id, { name: 'Acme Limited' });

      const read = async (after: number) => {
        const ac = new AbortController();
        const got: ChangeEvent[] = [];
        let saved = after;
        for await (const event of fsm.events.follow({
          after,
          where: ['collection', '=', 'clients'],
          signal: ac.signal,
          pollIntervalMs: 20,
          onCursor: (id) => {
            saved = id;
          },
        })) {
          got.push(event);
          if (event.type === 'clients.updated') {
            // The union by type: a clients event's data is a client, its default fields present.
            const name: string = event.data.name;
            assert.equal(name, 'Acme Limited');
            assert.deepEqual(event.changes, { name: { old: 'Acme Ltd', new: 'Acme Limited' } });
            break; // before its cursor is saved
          }
        }
        return { got, saved };
      };
      const first = await read(cursor);
      assert.deepEqual(
        first.got.map((e) => e.type),
        ['clients.created', 'clients.updated'],
      );
      assert.equal(first.saved, first.got[0].id, 'the event the loop broke out of is not counted');
      const second = await read(first.saved);
      assert.deepEqual(
        second.got.map((e) => e.id),
        [first.got[1].id],
      );
    });

    test('an abort while waiting ends the loop at once, and an aborted signal reads nothing', async () => {
      const ac = new AbortController();
      const started = Date.now();
      setTimeout(() => ac.abort(), 100);
      const got: ChangeEvent[] = [];
      for await (const event of fsm.events.follow({
        after: (await storedIds()).at(-1),
        signal: ac.signal,
        pollIntervalMs: 60_000,
      }))
        got.push(event);
      assert.equal(got.length, 0);
      assert.ok(Date.now() - started < 10_000, 'not the 60 s wait');

      eventRequests.length = 0;
      for await (const event of fsm.events.follow({ signal: AbortSignal.abort() })) got.push(event);
      assert.deepEqual(got, []);
      assert.equal(eventRequests.length, 0);
    });

    test('without polling options it follows the live stream (Server-Sent Events), resuming after the cursor', async () => {
      const accepts: (string | null)[] = [];
      const streaming = await signedInClient(s, {
        fetch: (r) => {
          if (new URL(r.url).pathname === '/events') accepts.push(r.headers.get('accept'));
          return fetch(r);
        },
      });
      const start = (await storedIds()).at(-1)!;
      const ac = new AbortController();
      const guard = setTimeout(() => ac.abort(), 20_000);
      const seen: ChangeEvent[] = [];
      const writer = (async () => {
        await new Promise((r) => setTimeout(r, 200));
        await streaming.create('jobs', [{ title: 'Streamed 1' }]);
        await streaming.create('clients', [{ name: 'Not matched' }]);
        await streaming.create('jobs', [{ title: 'Streamed 2' }]);
      })();
      for await (const event of streaming.events.follow({
        after: start,
        where: ['collection', '=', 'jobs'],
        signal: ac.signal,
      })) {
        seen.push(event);
        if (seen.length === 2) ac.abort();
      }
      clearTimeout(guard);
      await writer;
      assert.deepEqual(
        seen.map((e) => [e.type, e.collection]),
        [
          ['jobs.created', 'jobs'],
          ['jobs.created', 'jobs'],
        ],
      );
      assert.ok(seen[0].id > start && seen[1].id > seen[0].id);
      assert.ok(accepts.length >= 1 && accepts.every((a) => a === 'text/event-stream'));
    });

    test('a server that answers the JSON list instead of a stream is polled, nothing missed', async () => {
      // As an older server or a proxy that drops `Accept` would: /events answers the page of JSON.
      const asked: { accept: string | null; url: URL }[] = [];
      const noStream = await signedInClient(s, {
        fetch: (r) => {
          const url = new URL(r.url);
          if (url.pathname !== '/events') return fetch(r);
          asked.push({ accept: r.headers.get('accept'), url });
          const headers = new Headers(r.headers);
          headers.delete('accept');
          return fetch(new Request(r, { headers }));
        },
      });
      const start = (await storedIds()).at(-1)!;
      await noStream.create('jobs', [{ title: 'Polled 1' }, { title: 'Polled 2' }]);
      const ac = new AbortController();
      const guard = setTimeout(() => ac.abort(), 20_000);
      const seen: ChangeEvent[] = [];
      for await (const event of noStream.events.follow({ after: start, signal: ac.signal })) {
        seen.push(event);
        if (seen.length === 2) ac.abort();
      }
      clearTimeout(guard);
      assert.deepEqual(
        seen.map((e) => e.type),
        ['jobs.created', 'jobs.created'],
      );
      assert.ok(seen[0].id > start && seen[1].id > seen[0].id);
      // Asked for the stream once, then paged with `id > cursor`.
      assert.equal(asked[0].accept, 'text/event-stream');
      assert.ok(asked.length >= 2);
      assert.match(asked[1].url.searchParams.get('where') ?? '', new RegExp(`id > ${start}`));
    });

    test('an error from the server ends the loop with the typed error', async () => {
      await assert.rejects(
        async () => {
          // @ts-expect-error: no such field, as the server will say
          for await (const event of fsm.events.follow({ where: ['nope', '=', 1] })) void event;
        },
        (e: Error & { status?: number; code?: number }) => e.status === 400 && e.code === 1002,
      );
    });
  });
}
