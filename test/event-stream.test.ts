import assert from 'node:assert/strict';
import pg from 'pg';
import { execFile } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import { before, describe, test } from 'node:test';
import { EventSource } from 'eventsource';
import { MAX_STREAMS_PER_TOKEN, STREAM_BUFFER_LIMIT } from '../src/http/event-stream.js';
import { hashToken } from '../src/auth/secrets.js';
import { addUser, suiteWithTenants, call, DIALECTS, skipUnless, type Tenant } from './helpers.js';

const CLI = 'dist/src/cli/index.js';

interface Received {
  id: number;
  type: string;
  data: { id: number; type: string; collection: string; item: { id: number } };
  at: number;
}

/** A real SSE client (the `eventsource` package) with the API's headers through a custom fetch. */
function follow(origin: string, token: string, query = '', lastEventId?: number) {
  const got: Received[] = [];
  const waiters: (() => void)[] = [];
  const es = new EventSource(`${origin}/events${query}`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: {
          ...(init?.headers as Record<string, string>),
          authorization: `Bearer ${token}`,
          'x-version': '1.0',
          ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}),
        },
      }),
  });
  const onEvent = (e: MessageEvent) => {
    got.push({ id: Number(e.lastEventId), type: e.type, data: JSON.parse(e.data), at: Date.now() });
    for (const w of waiters.splice(0)) w();
  };
  for (const type of [
    'jobs.created',
    'jobs.updated',
    'users.created',
    'users.updated',
    'visits.created',
    'visits.updated',
    'notes.created',
  ])
    es.addEventListener(type, onEvent);
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`stream failed: ${(e as { code?: number }).code ?? ''} ${e.message ?? ''}`));
  });
  /** Resolves once `pred` holds of what was received, or fails after `ms`. */
  async function until(pred: (got: Received[]) => boolean, ms = 5000): Promise<Received[]> {
    const end = Date.now() + ms;
    while (!pred(got)) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`timed out; received ${JSON.stringify(got.map((g) => [g.id, g.type]))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return got;
  }
  return { es, got, opened, until, close: () => es.close() };
}

/** A raw request, for status codes, headers and how the body ends. */
const raw = (origin: string, token: string, query = '', headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${origin}/events${query}`, {
    headers: { authorization: `Bearer ${token}`, 'x-version': '1.0', accept: 'text/event-stream', ...headers },
    signal,
  });

for (const dialect of DIALECTS) {
  describe(`GET /events as a live stream (${dialect})`, { skip: skipUnless(dialect) }, () => {
    const { t, a, b } = suiteWithTenants(dialect);
    let origin: string;

    before(async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });

    const job = async (tenant: Tenant, title: string) => {
      const res = await call(t.app, tenant.token, 'POST', '/jobs', { jobs: [{ title }] });
      assert.equal(res.status, 200, res.raw);
      return res.body.jobs[0].id as number;
    };

    test('an event committed reaches the stream within 1 s, in id order, as the list shows it; another account’s does not', async () => {
      const s = follow(origin, a.token);
      await s.opened;
      const list = (await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events;
      const committed: number[] = [];
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(await job(a, `Live ${i}`));
        committed.push(Date.now());
      }
      await job(b, 'Other account');
      const got = await s.until((g) => g.length >= 3);
      assert.deepEqual(
        got.map((g) => g.data.item.id),
        ids,
      );
      assert.ok(got.every((g, i) => i === 0 || g.id > got[i - 1].id));
      assert.ok(got.every((g) => g.type === 'jobs.created' && g.data.id === g.id));
      assert.ok(got[0].id > (list[0]?.id ?? 0));
      for (let i = 0; i < 3; i++) assert.ok(got[i].at - committed[i] < 1000, `latency ${got[i].at - committed[i]} ms`);
      // The same item as GET /events gives.
      const same = await call(t.app, a.token, 'GET', `/events/${got[0].id}`);
      assert.deepEqual(same.body.events[0], got[0].data);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(s.got.length, 3, 'the other account’s event never arrives');
      s.close();
    });

    test('resumes after Last-Event-ID (which wins over where id > N); where filters; a bad Last-Event-ID is a 400', async () => {
      const first = await job(a, 'Before resume');
      const ev = (
        await call(
          t.app,
          a.token,
          'GET',
          `/events?where=${encodeURIComponent(`item.id = ${first} and collection = "jobs"`)}`,
        )
      ).body.events[0];
      const second = await job(a, 'Missed while away');
      const s = follow(origin, a.token, `?where=${encodeURIComponent('id > 0')}`, ev.id);
      await s.opened;
      const got = await s.until((g) => g.some((x) => x.data.item.id === second));
      assert.ok(
        got.every((g) => g.id > ev.id),
        'nothing at or before Last-Event-ID',
      );
      s.close();

      const since = follow(origin, a.token, `?where=${encodeURIComponent(`id > ${ev.id} and collection = "users"`)}`);
      await since.opened;
      const user = await addUser(t, a, 'employee');
      await job(a, 'not a user');
      const users = await since.until((g) => g.some((x) => x.data.item.id === user.id));
      assert.ok(users.every((g) => g.data.collection === 'users'));
      since.close();

      for (const bad of ['-1', 'abc', '1.5', '']) {
        const res = await raw(origin, a.token, '', { 'last-event-id': bad });
        assert.equal(res.status, 400, bad);
        assert.match(JSON.stringify(await res.json()), /1002/);
      }
      const badWhere = await raw(origin, a.token, `?where=${encodeURIComponent('nope = 1')}`);
      assert.equal(badWhere.status, 400);
      assert.equal((await raw(origin, 'not-a-token')).status, 401);
      assert.equal((await raw(origin, await a.tokenFor(a.adminId, ['jobs.read']))).status, 403);
    });

    test('each where (on collection alone, filtered in memory, or on other fields, by a query) streams exactly what the list gives', async (ctx) => {
      const start = (await call(t.app, a.token, 'GET', '/events?sort=-id&recordsPerPage=1')).body.events[0]
        .id as number;
      const wheres = [
        'collection = "jobs"',
        'collection != "jobs"',
        'collection = "jobs" or collection = "notes"',
        '(collection = "jobs" or collection = "users") and collection != "users"',
        'collection = "Jobs"',
        'type = "jobs.updated"',
        'collection = "jobs" and item.id > 0',
      ];
      const streams = wheres.map((w) => follow(origin, a.token, `?where=${encodeURIComponent(w)}`));
      const everything = follow(origin, a.token, '', start);
      ctx.after(() => {
        for (const s of [...streams, everything]) s.close();
      });
      await Promise.all(streams.map((s) => s.opened));
      const id = await job(a, 'Filtered');
      assert.equal(
        (await call(t.app, a.token, 'PATCH', `/jobs/${id}`, { jobs: [{ id, title: 'Filtered 2' }] })).status,
        200,
      );
      assert.equal((await call(t.app, a.token, 'POST', '/notes', { notes: [{ job: { id }, body: 'n' }] })).status, 200);
      const user = await addUser(t, a, 'employee');
      const all = (await call(t.app, a.token, 'GET', `/events?where=${encodeURIComponent(`id > ${start}`)}`)).body
        .events as { id: number }[];
      assert.ok(all.some((e) => e.id > start) && all.length >= 4, JSON.stringify(all));
      const last = Math.max(...all.map((e) => e.id));
      // Every stream has been handed out up to `last` once a stream that sees everything has it.
      await everything.until((g) => g.some((x) => x.id === last));
      await new Promise((r) => setTimeout(r, 600));
      for (const [i, w] of wheres.entries()) {
        const listed = (
          await call(t.app, a.token, 'GET', `/events?where=${encodeURIComponent(`id > ${start} and (${w})`)}`)
        ).body.events.map((e: { id: number }) => e.id) as number[];
        // Waits for what the list gives (a slow handout), then nothing else may have come.
        await streams[i].until((g) => listed.every((id) => g.some((x) => x.id === id)));
        assert.deepEqual(
          streams[i].got.map((g) => g.id),
          listed,
          w,
        );
      }
      assert.ok(
        streams[0].got.length >= 2 &&
          streams[4].got.length === 0 &&
          streams[1].got.some((g) => g.data.item.id === user.id),
      );
    });

    test(`at most ${MAX_STREAMS_PER_TOKEN} streams per token (then 429 with Retry-After); a revoked token's stream ends within 5 s`, async () => {
      const token = await a.tokenFor(a.adminId);
      const ctl = new AbortController();
      const open = [];
      for (let i = 0; i < MAX_STREAMS_PER_TOKEN; i++) {
        const res = await raw(origin, token, '', {}, ctl.signal);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
        open.push(res);
      }
      const over = await raw(origin, token);
      assert.equal(over.status, 429);
      assert.ok(Number(over.headers.get('retry-after')) > 0);
      // Another token of the same user is counted on its own.
      const other = await raw(origin, a.token, '', {}, ctl.signal);
      assert.equal(other.status, 200);

      // Revoke: every stream of the token ends (the body finishes) within 5 s.
      const readers = open.map(async (res) => {
        const reader = res.body!.getReader();
        for (;;) if ((await reader.read()).done) return Date.now();
      });
      const revokedAt = Date.now();
      await t.database.db
        .updateTable('oauth_tokens')
        .set({ revoked: 1 })
        .where('token_hash', '=', hashToken(token))
        .execute();
      const ended = await Promise.race([
        Promise.all(readers),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('streams still open after 6 s')), 6000)),
      ]);
      for (const at of ended) assert.ok(at - revokedAt < 5000);
      ctl.abort();
      // Their slots are free again: a new token may open 10 (the revoked one gets 401).
      assert.equal((await raw(origin, token)).status, 401);
    });

    test('a comment line at least every 15 s keeps the stream alive', { timeout: 30_000 }, async () => {
      const ctl = new AbortController();
      const res = await raw(origin, a.token, '', {}, ctl.signal);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const started = Date.now();
      while (!/: heartbeat/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
      assert.match(text, /^: heartbeat \d+$/m);
      assert.ok(Date.now() - started <= 15_000);
      ctl.abort();
    });

    test('a Contractor’s stream shows their own work only', async () => {
      const crew = await addUser(t, a, 'contractor');
      const s = follow(origin, crew.token);
      await s.opened;
      const mine = await job(a, 'Crew job');
      const theirs = await job(a, 'Office job');
      const visit = await call(t.app, a.token, 'POST', '/visits', {
        visits: [
          {
            job: { id: mine },
            user: { id: crew.id },
            label: 'Fit',
            startTime: '2026-12-01T09:00:00Z',
            endTime: '2026-12-01T10:00:00Z',
          },
        ],
      });
      assert.equal(visit.status, 200, visit.raw);
      await call(t.app, a.token, 'PATCH', `/jobs/${theirs}`, { jobs: [{ title: 'Office job, renamed' }] });
      await call(t.app, a.token, 'PATCH', `/jobs/${mine}`, { jobs: [{ title: 'Crew job, renamed' }] });
      const got = await s.until((g) => g.some((x) => x.type === 'jobs.updated'));
      assert.ok(got.some((g) => g.type === 'visits.created' && g.data.item.id === visit.body.visits[0].id));
      assert.ok(got.every((g) => g.data.item.id !== theirs));
      s.close();
    });

    test('a reader that stops reading is cut off once its unsent bytes pass the bound; the other streams keep receiving', async () => {
      // A raw socket that sends the request and never reads: the kernel's buffers fill (on loopback
      // here at most 4 MiB + 128 KiB), then the server's.
      const port = (t.app.server.address() as AddressInfo).port;
      const serverSide = new Map<number, net.Socket>();
      const onConnection = (socket: net.Socket) => serverSide.set(socket.remotePort!, socket);
      t.app.server.on('connection', onConnection);
      const slow = net.connect(port, '127.0.0.1');
      slow.on('error', () => {});
      const healthy = follow(origin, a.token, `?where=${encodeURIComponent('collection = "jobs"')}`);
      let sampler: NodeJS.Timeout | undefined;
      try {
        await new Promise((resolve) => slow.once('connect', resolve));
        slow.write(
          `GET /events?where=${encodeURIComponent('collection = "jobs"')} HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
            `authorization: Bearer ${a.token}\r\nx-version: 1.0\r\naccept: text/event-stream\r\n\r\n`,
        );
        slow.pause();
        await healthy.opened;
        await new Promise((r) => setTimeout(r, 300));
        const server = serverSide.get(slow.localPort!)!;
        assert.ok(server, 'the server side of the slow socket');
        // What the server holds for it, and the largest single write it was handed.
        let most = 0;
        let largest = 0;
        const write = server.write.bind(server) as (...args: unknown[]) => boolean;
        server.write = ((chunk: string | Buffer, ...rest: unknown[]) => {
          largest = Math.max(largest, Buffer.byteLength(chunk));
          const ok = write(chunk, ...rest);
          most = Math.max(most, server.writableLength);
          return ok;
        }) as typeof server.write;
        sampler = setInterval(() => (most = Math.max(most, server.writableLength)), 2);
        // Events of about 8.5 KB, 50 per write, until it is cut off (at most about 17 MB).
        const description = 'x'.repeat(8000);
        let last = 0;
        for (let i = 0; i < 40 && !server.destroyed; i++) {
          const items = Array.from({ length: 50 }, (_, k) => ({ title: `Bulk ${i}-${k}`, description }));
          const res = await call(t.app, a.token, 'POST', '/jobs', { jobs: items });
          assert.equal(res.status, 200, res.raw);
          last = res.body.jobs[49].id;
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(server.destroyed, 'the slow reader was cut off');
        // Never more than the bound plus the one write that found it still under the bound.
        assert.ok(most > STREAM_BUFFER_LIMIT, `the server did buffer for it (${most} bytes)`);
        assert.ok(most <= STREAM_BUFFER_LIMIT + largest, `at most ${most} bytes held (largest write ${largest})`);
        // The other stream received every event, up to the last.
        const created = await healthy.until((g) => g.some((x) => x.data.item.id === last), 10_000);
        const ids = created.map((g) => g.data.item.id);
        assert.equal(new Set(ids).size, ids.length);
        assert.ok(ids.length >= 100 && ids.every((id, i) => i === 0 || id === ids[i - 1] + 1), 'no gap');
        // And the slow reader, reading at last, sees its connection end.
        let closed = false;
        slow.on('close', () => (closed = true)).resume();
        const end = Date.now() + 3000;
        while (!closed && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
        assert.ok(closed, 'the slow reader sees its connection end');
      } finally {
        clearInterval(sampler);
        t.app.server.off('connection', onConnection);
        healthy.close();
        slow.destroy();
      }
    });

    // PostgreSQL's own: SQLite has no LISTEN (its streams are woken by this process's commits).
    if (dialect === 'postgres')
      test('a lost LISTEN connection is opened again; meanwhile the poll feeds the stream', async () => {
        const s = follow(origin, a.token, `?where=${encodeURIComponent('collection = "jobs"')}`);
        await s.opened;
        const admin = new pg.Client({ connectionString: t.config.databaseUrl });
        await admin.connect();
        const listeners = async () =>
          (
            await admin.query(
              `select pid from pg_stat_activity where datname = current_database() and query = 'listen fsm_events' and pid <> pg_backend_pid()`,
            )
          ).rows.map((r) => Number(r.pid));
        try {
          let before: number[] = [];
          for (let i = 0; i < 50 && !before.length; i++) {
            before = await listeners();
            if (!before.length) await new Promise((r) => setTimeout(r, 100));
          }
          assert.equal(before.length, 1, 'one LISTEN connection while a stream is open');
          await admin.query('select pg_terminate_backend($1)', [before[0]]);
          // No notification can come now: the poll (every 2 s) finds the event.
          const lost = await job(a, 'While not listening');
          await s.until((g) => g.some((x) => x.data.item.id === lost), 5000);
          assert.ok(
            s.got.some((x) => x.data.item.id === lost),
            'the poll delivered the event',
          );
          let after: number[] = [];
          for (let i = 0; i < 60 && !(after.length === 1 && after[0] !== before[0]); i++) {
            after = await listeners();
            await new Promise((r) => setTimeout(r, 100));
          }
          assert.equal(after.length, 1, 'listening again, on one connection');
          assert.notEqual(after[0], before[0]);
          // Notified again: within 1 s, well under the 2 s poll.
          const heard = await job(a, 'Listening again');
          const committed = Date.now();
          const got = await s.until((g) => g.some((x) => x.data.item.id === heard));
          assert.ok(got.find((x) => x.data.item.id === heard)!.at - committed < 1000);
        } finally {
          await admin.end();
          s.close();
        }
      });

    test('an event committed by another process reaches this process’s stream within 1 s', async () => {
      const s = follow(origin, a.token, `?where=${encodeURIComponent('collection = "users"')}`);
      await s.opened;
      const env = { ...process.env, DATA_DIR: t.dataDir, DATABASE_URL: t.config.databaseUrl ?? '' };
      const exited = await new Promise<{ at: number; out: string }>((resolve, reject) =>
        execFile(
          process.execPath,
          [
            CLI,
            'users',
            'create',
            '--account',
            String(a.accountId),
            '--first-name',
            'From',
            '--last-name',
            'Cli',
            '--mobile',
            '+447700900999',
          ],
          { env },
          (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve({ at: Date.now(), out: stdout })),
        ),
      );
      const id = JSON.parse(exited.out).user.id as number;
      const got = await s.until((g) => g.some((x) => x.data.item.id === id));
      const at = got.find((x) => x.data.item.id === id)!.at;
      assert.ok(at - exited.at < 1000, `latency after the other process exited: ${at - exited.at} ms`);
      s.close();
    });
  });
}
