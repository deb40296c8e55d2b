import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchBrowser } from './browser.js';
import {
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

/** The client application's callback: a tiny server that hands over each URL it receives. */
function startCallbackServer() {
  const waiting: ((url: URL) => void)[] = [];
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end('received');
    waiting.shift()?.(new URL(req.url!, 'http://127.0.0.1'));
  });
  return {
    server,
    listen: () =>
      new Promise<number>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
      ),
    next: () => new Promise<URL>((resolve) => waiting.push(resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const dialect of DIALECTS) {
  describe(`sign-in and consent in Chromium (${dialect})`, { skip: skipUnless(dialect) || browserSkip() }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    let browser: Browser;
    const callback = startCallbackServer();

    before(async () => {
      t = await createTestApp(dialect);
      tenant = await createTenant(t);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await callback.close();
      await t?.close();
    });

    test('the owner signs in and allows; the client exchanges the code and calls the API', async () => {
      const redirectUri = `http://127.0.0.1:${await callback.listen()}/callback`;
      const { clientId, clientSecret } = await createOAuthClient(t.database, {
        redirectUris: [redirectUri],
        name: 'Browser test app',
        permissions: ['users.read', 'jobs.read'],
        allowPermissionChoice: true,
      });
      const state = 'st&te <1>';
      const auth = `${base}/oauth2/code?${new URLSearchParams({ response_type: 'code', client_id: clientId, scope: 'default', state, access_type: 'offline' })}`;

      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(auth);
      await page.fill('input[name=login]', tenant.login);
      await page.fill('input[name=password]', tenant.password);
      await page.click('button[type=submit]');
      await page.waitForSelector('button[name=decision][value=allow]');
      assert.ok((await page.textContent('body'))!.includes('Browser test app'));
      assert.equal(await page.locator('input[name=permissions]').count(), 2);
      assert.ok(await page.isChecked('input[name=permissions][value="users.read"]'));
      assert.equal(await page.isChecked('input[name=reauthenticate]'), false);
      await page.uncheck('input[name=permissions][value="jobs.read"]');
      const arrived = callback.next();
      await page.click('button[name=decision][value=allow]');
      const url = await arrived;
      await context.close();
      assert.equal(url.pathname, '/callback');
      assert.equal(url.searchParams.get('state'), state);
      const code = url.searchParams.get('code')!;
      assert.match(code, /^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/);

      const tokenRes = await fetch(`${base}/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code }),
      });
      assert.equal(tokenRes.status, 200);
      const tokens = (await tokenRes.json()) as { access_token: string; expires_in: number; refresh_token?: string };
      assert.equal(tokens.expires_in, 3600);
      assert.equal(typeof tokens.refresh_token, 'string');
      const headers = { authorization: `Bearer ${tokens.access_token}`, 'x-version': '1.0' };
      assert.equal((await fetch(`${base}/users`, { headers })).status, 200);
      // The owner unticked jobs.read: the token does not carry it.
      assert.equal((await fetch(`${base}/jobs`, { headers })).status, 403);
    });
  });
}
