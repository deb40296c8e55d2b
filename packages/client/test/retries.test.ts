import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type FieldService, type FieldServiceError } from '@fieldservice/client';
import { DIALECTS, serve, signedInClient, skipUnless, type Served } from './fixture.js';

/** What the proxy does with one request: forward it, forward it and drop the answer, or answer itself. */
type Plan = 'forward' | 'drop' | { status: number; retryAfter?: string; code: number };
interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  answered: number | 'dropped';
  replayed?: boolean;
}

/** Between the client and the real server: a flaky network or a busy load balancer, as told. */
async function startProxy(target: string) {
  const seen: Seen[] = [];
  let plan: (n: number) => Plan = () => 'forward';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c) => chunks.push(c))
      .on('end', async () => {
        const p = plan(seen.length);
        const s: Seen = {
          method: req.method!,
          url: req.url!,
          key: req.headers['idempotency-key'] as string | undefined,
          answered: 0,
        };
        seen.push(s);
        if (typeof p === 'object') {
          const type = p.status >= 500 ? 'server' : 'client';
          res.writeHead(p.status, {
            'content-type': 'application/json',
            ...(p.retryAfter ? { 'retry-after': p.retryAfter } : {}),
          });
          res.end(JSON.stringify({ result: 'error', error: { type, code: p.code, message: 'from the proxy' } }));
          s.answered = p.status;
          return;
        }
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection' && k !== 'content-length'),
        ) as Record<string, string>;
        const answer = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        });
        const body = Buffer.from(await answer.arrayBuffer());
        if (p === 'drop') {
          // The server did the work and answered; the answer is lost on the way back.
          s.answered = 'dropped';
          req.socket.destroy();
          return;
        }
        s.answered = answer.status;
        s.replayed = answer.headers.get('idempotency-replayed') === 'true';
        const out: Record<string, string> = {};
        answer.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
        });
        res.writeHead(answer.status, out).end(body);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    set plan(f: (n: number) => Plan) {
      plan = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

for (const dialect of DIALECTS) {
  describe(`client package: retries never duplicate a write (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let s: Served;
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    let fsm: FieldService;
    const waits: number[] = [];

    before(async () => {
      s = await serve(dialect);
      proxy = await startProxy(s.base);
      // Waits are recorded and shortened: the test checks which waits the client chose, not the clock.
      fsm = await signedInClient(s, {
        apiUrl: proxy.url,
        retry: { retries: 3, baseDelayMs: 100, maxDelayMs: 5_000 },
        sleep: async (ms) => {
          waits.push(ms);
        },
      });
    });
    after(async () => {
      await proxy?.close();
      await s?.close();
    });
    const reset = (plan: (n: number) => Plan) => {
      proxy.seen.length = 0;
      waits.length = 0;
      proxy.plan = plan;
    };
    const titled = async (title: string) =>
      (
        await s.t.database.db
          .selectFrom('jobs')
          .select('id')
          .where('title', '=', title)
          .where('account_id', '=', s.tenant.accountId)
          .execute()
      ).length;

    test('the first answer is lost after the server committed: the retry, with the same key, gets it replayed; one item exists', async () => {
      reset((n) => (n === 0 ? 'drop' : 'forward'));
      const [job] = await fsm.create('jobs', [{ title: 'Created once' }]);
      assert.deepEqual(
        proxy.seen.map((x) => x.answered),
        ['dropped', 200],
      );
      assert.ok(proxy.seen[0].key);
      assert.equal(proxy.seen[1].key, proxy.seen[0].key);
      assert.equal(proxy.seen[1].replayed, true); // the server's first answer, not a second write
      assert.equal(waits.length, 1);
      assert.equal(await titled('Created once'), 1);
      assert.equal((await fsm.get('jobs', job.id, { fields: ['title'] })).item.title, 'Created once');

      // Each call has its own key: the same body sent again is a second job, as asked.
      reset(() => 'forward');
      await fsm.create('jobs', [{ title: 'Created once' }]);
      assert.notEqual(proxy.seen[0].key, undefined);
      assert.equal(await titled('Created once'), 2);

      // A lost update and a lost delete are repeated safely too.
      reset((n) => (n === 0 ? 'drop' : 'forward'));
      const [upd] = await fsm.update('jobs', [{ id: job.id, priority: 'high' }]);
      assert.equal(upd.priority, 'high');
      reset((n) => (n === 0 ? 'drop' : 'forward'));
      await fsm.delete('jobs', [job]);
      assert.deepEqual(
        proxy.seen.map((x) => x.answered),
        ['dropped', 200],
      );
      assert.equal(await titled('Created once'), 1);
    });

    test('409 and 503 are retried after Retry-After with the same key; a list read is retried too', async () => {
      reset((n) =>
        n === 0
          ? { status: 409, retryAfter: '1', code: 1090 }
          : n === 1
            ? { status: 503, retryAfter: '2', code: 1503 }
            : 'forward',
      );
      await fsm.create('jobs', [{ title: 'After a wait' }]);
      assert.deepEqual(
        proxy.seen.map((x) => x.answered),
        [409, 503, 200],
      );
      assert.equal(new Set(proxy.seen.map((x) => x.key)).size, 1);
      assert.deepEqual(waits, [1000, 2000]);
      assert.equal(await titled('After a wait'), 1);

      reset((n) => (n === 0 ? 'drop' : 'forward'));
      const all = [];
      for await (const j of fsm.list('jobs', { where: ['title', '=', 'After a wait'] })) all.push(j);
      assert.equal(all.length, 1);
      assert.deepEqual(
        proxy.seen.map((x) => x.answered),
        ['dropped', 200],
      );
    });

    test('retries are bounded: after the last one, or a Retry-After longer than allowed, the error is thrown', async () => {
      reset(() => ({ status: 503, code: 1503 }));
      await assert.rejects(
        fsm.create('jobs', [{ title: 'Never' }]),
        (e: FieldServiceError) => e.status === 503 && e.code === 1503,
      );
      assert.equal(proxy.seen.length, 4);
      assert.equal(waits.length, 3);
      assert.ok(
        waits.every((w, i) => w <= 100 * 2 ** i && w >= 50 * 2 ** i),
        `backoff doubles: ${waits}`,
      );

      reset(() => ({ status: 503, retryAfter: '3600', code: 1503 }));
      await assert.rejects(
        fsm.create('jobs', [{ title: 'Never' }]),
        (e: FieldServiceError) => e.status === 503 && e.retryAfter === 3600,
      );
      assert.equal(proxy.seen.length, 1);
      assert.deepEqual(waits, []);

      reset(() => 'drop');
      await assert.rejects(fsm.create('jobs', [{ title: 'Never' }]), TypeError); // fetch failed, four times
      assert.equal(proxy.seen.length, 4);
      assert.equal(await titled('Never'), 1); // all four reached the server; the key made them one
    });
  });
}
