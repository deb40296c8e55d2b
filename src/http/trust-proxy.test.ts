import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../app.js';
import { ConfigError, loadConfig } from '../config.js';
import { DIALECTS, createTestApp, skipUnless, type TestApp } from '../../test/helpers.js';

/**
 * TRUST_PROXY (docs/deployment.md): behind a balancer every request comes from the balancer's
 * address, so the per-address limit on /oauth2/ pages would count all clients in one bucket. With
 * the balancer named, the client's address is read from its X-Forwarded-For; from anyone else,
 * X-Forwarded-For is ignored, so a client cannot choose its own bucket.
 */
test('TRUST_PROXY takes addresses, CIDR ranges and the named ranges; refuses anything else', () => {
  const cfg = (v: string) => loadConfig({ TRUST_PROXY: v } as NodeJS.ProcessEnv).trustProxy;
  assert.equal(cfg(''), undefined);
  assert.deepEqual(cfg('10.0.0.5, 10.1.0.0/16,loopback, ::1, fd00::/8'), [
    '10.0.0.5',
    '10.1.0.0/16',
    'loopback',
    '::1',
    'fd00::/8',
  ]);
  for (const bad of ['true', '1', '*', '10.0.0.300', '10.0.0.0/33', '10.0.0.0/8/1', 'proxy.example.com']) {
    assert.throws(() => cfg(bad), ConfigError, bad);
  }
});

for (const dialect of DIALECTS) {
  describe(
    `TRUST_PROXY and the per-address limit on /oauth2/ pages (${dialect})`,
    { skip: skipUnless(dialect) },
    () => {
      let t: TestApp;
      /** GET /oauth2/code as sent by the balancer at 10.0.0.5 for a client at `client`, or by a client directly. */
      const page = (from: string, forwardedFor?: string) =>
        t.app.inject({
          method: 'GET',
          url: '/oauth2/code?response_type=code',
          remoteAddress: from,
          headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
        });

      before(async () => {
        t = await createTestApp(dialect);
        await t.app.close();
        t.config.trustProxy = ['10.0.0.5'];
        t.config.rateLimitAuth = 2;
        const app = await buildApp({ config: t.config, database: t.database, clock: () => t.clock.now });
        await app.ready();
        const close = t.close;
        t = { ...t, app, close: async () => (await app.close(), await close()) };
      });
      after(() => t?.close());

      test('through the named balancer, each client has its own bucket', async () => {
        for (let i = 0; i < 2; i++) assert.notEqual((await page('10.0.0.5', '203.0.113.1')).statusCode, 429);
        assert.equal((await page('10.0.0.5', '203.0.113.1')).statusCode, 429);
        // Another client behind the same balancer is not refused; a client's own X-Forwarded-For
        // before the balancer's entry changes nothing (the balancer appends the address it saw).
        assert.notEqual((await page('10.0.0.5', '203.0.113.2')).statusCode, 429);
        assert.equal((await page('10.0.0.5', '198.51.100.9, 203.0.113.1')).statusCode, 429);
      });

      test('from anyone else, X-Forwarded-For is ignored', async () => {
        for (let i = 0; i < 2; i++) assert.notEqual((await page('192.0.2.7', `198.51.100.${i}`)).statusCode, 429);
        assert.equal((await page('192.0.2.7', '198.51.100.77')).statusCode, 429);
      });
    },
  );
}
