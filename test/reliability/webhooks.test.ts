import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, skipUnless } from '../helpers.js';
import { startReceiver, until } from '../receiver.js';
import { createSite, request, startServer } from './process.js';

/**
 * The delivery queue is the database: deliveries pending when the server is SIGKILLed are sent
 * after the restart, and several worker processes never send one attempt twice.
 */
for (const dialect of DIALECTS) {
  describe(`webhook deliveries across processes (${dialect})`, { skip: skipUnless(dialect) }, () => {
    test('pending deliveries survive SIGKILL and are all delivered after a restart', async () => {
      const site = await createSite(dialect, {
        WEBHOOKS_ALLOW_PRIVATE_URLS: '1',
        WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s,1s,1s',
      });
      // Down at first: every attempt fails, so deliveries stay pending.
      let up = false;
      const rx = await startReceiver(() => ({ status: up ? 200 : 503 }));
      let server = await startServer(site.env);
      try {
        const hook = await request(server.origin, site.token, 'POST', '/webhooks', {
          webhooks: [{ url: rx.url, events: ['clients.created'] }],
        });
        assert.equal(hook.status, 200, JSON.stringify(hook.body));
        const N = 30;
        for (let i = 0; i < N / 3; i++) {
          const res = await request(server.origin, site.token, 'POST', '/clients', {
            clients: [{ name: `k${i}a` }, { name: `k${i}b` }, { name: `k${i}c` }],
          });
          assert.equal(res.status, 200);
        }
        await until(() => rx.received.length >= 5, 15_000, 'some failed attempts');
        server.child.kill('SIGKILL');
        await server.exited;
        up = true;
        server = await startServer(site.env);
        const delivered = () => new Set(rx.received.filter((r) => r.at > 0).map((r) => r.headers['webhook-id']));
        // Every event's delivery eventually succeeds (a lease held by the killed process runs out first).
        await until(
          async () => {
            const res = await request(
              server.origin,
              site.token,
              'GET',
              `/deliveries?where=${encodeURIComponent("state = 'succeeded'")}`,
            );
            return res.body?.metadata?.recordsCount === N;
          },
          60_000,
          'all deliveries succeeded',
        );
        assert.equal(delivered().size, N);
      } finally {
        server.child.kill('SIGKILL');
        await rx.close();
        await site.close();
      }
    });

    test('with WORKERS=2 each attempt is sent once', async () => {
      const site = await createSite(dialect, { WEBHOOKS_ALLOW_PRIVATE_URLS: '1', WORKERS: '2' });
      const rx = await startReceiver(() => ({ status: 200, delayMs: 20 }));
      const server = await startServer(site.env);
      try {
        const hook = await request(server.origin, site.token, 'POST', '/webhooks', {
          webhooks: [{ url: rx.url, events: ['*'] }],
        });
        assert.equal(hook.status, 200, JSON.stringify(hook.body));
        const N = 60;
        await Promise.all(
          Array.from({ length: 6 }, async (_, w) => {
            for (let i = 0; i < N / 6; i++)
              assert.equal(
                (await request(server.origin, site.token, 'POST', '/clients', { clients: [{ name: `w${w}-${i}` }] }))
                  .status,
                200,
              );
          }),
        );
        // N client events and the webhook's own creation.
        await until(() => rx.received.length >= N + 1, 30_000, 'every delivery');
        await new Promise((r) => setTimeout(r, 1000));
        const ids = rx.received.map((r) => r.headers['webhook-id']);
        assert.equal(ids.length, N + 1);
        assert.equal(new Set(ids).size, N + 1);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
        await rx.close();
        await site.close();
      }
    });
  });
}
