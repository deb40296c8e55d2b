import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchBrowser } from './browser.js';
import {
  authorizeWithInject,
  call,
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  injectBrowser,
  skipUnless,
  tokenRequest,
  type Tenant,
  type TestApp,
} from './helpers.js';

const CB = 'http://127.0.0.1:9/cb';
/** Where the screenshots go, to be looked at (FSM_SCREENSHOTS overrides). */
const SHOTS = process.env.FSM_SCREENSHOTS ?? path.join(os.tmpdir(), 'fsm-screenshots');

for (const dialect of DIALECTS) {
  describe(`connected applications in Chromium (${dialect})`, { skip: skipUnless(dialect) || browserSkip() }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    let browser: Browser;

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0;
      tenant = await createTenant(t);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await launchBrowser();
      fs.mkdirSync(SHOTS, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    test('the owner signs in, sees the connected applications at phone and desktop width, and revokes one', async () => {
      const clients = [
        await createOAuthClient(t.database, {
          redirectUris: [CB],
          name: 'Northwind Scheduling & Dispatch for Field Crews',
          permissions: ['jobs.read', 'jobs.write', 'visits.read', 'visits.write', 'users.read'],
        }),
        await createOAuthClient(t.database, {
          redirectUris: [CB],
          name: 'Ledger',
          permissions: ['users.read', 'clients.read'],
        }),
      ];
      const issued: string[] = [];
      const owner = injectBrowser(t.app);
      for (const c of clients) {
        const { code } = await authorizeWithInject(
          owner,
          { client_id: c.clientId, access_type: 'offline' },
          { login: tenant.login, password: tenant.password },
        );
        issued.push(
          (
            await tokenRequest(t.app, {
              grant_type: 'authorization_code',
              code: code!,
              client_id: c.clientId,
              client_secret: c.clientSecret,
            })
          ).body.access_token,
        );
      }

      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 1,
        isMobile: true,
        hasTouch: true,
      });
      const page = await context.newPage();
      await page.goto(`${base}/oauth2/authorizations`);
      await page.fill('input[name=login]', tenant.login);
      await page.fill('input[name=password]', tenant.password);
      await page.click('button[type=submit]');
      await page.waitForSelector('h1:text("Connected applications")');
      assert.equal(new URL(page.url()).pathname, '/oauth2/authorizations', 'back on the page after signing in');
      for (const c of clients)
        assert.equal(await page.locator(`button[name=revoke][value="${c.clientId}"]`).count(), 1);
      assert.ok((await page.textContent('body'))!.includes('Northwind Scheduling & Dispatch for Field Crews'));
      // Each permission in words beside its name, as on the consent page.
      const shown = (await page.locator('.perms li').allTextContents()).map((s) => s.replace(/\s+/g, ' '));
      assert.ok(shown.includes('Users: Read users users.read'), shown.join(' | '));
      assert.ok(shown.includes('Jobs: Read jobs jobs.read, Change jobs jobs.write'), shown.join(' | '));

      // Usable on a phone: nothing wider than the screen, text and buttons of a readable size.
      const layout = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        fontSize: parseFloat(getComputedStyle(document.body).fontSize),
        buttons: [...document.querySelectorAll('button[name=revoke]')]
          .map((b) => b.getBoundingClientRect())
          .map((r) => ({ w: r.width, h: r.height, right: r.right })),
      }));
      assert.ok(layout.scrollWidth <= 390, `no horizontal scrolling (${layout.scrollWidth}px)`);
      assert.ok(layout.fontSize >= 16);
      for (const b of layout.buttons) {
        assert.ok(b.h >= 40 && b.w >= 200, `a tappable button (${b.w}x${b.h})`);
        assert.ok(b.right <= 390);
      }
      await page.screenshot({ path: path.join(SHOTS, `authorizations-phone-${dialect}.png`), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.screenshot({ path: path.join(SHOTS, `authorizations-desktop-${dialect}.png`), fullPage: true });

      // Revoke the first: a 303 back to the page, which no longer lists it; its token is dead.
      await Promise.all([page.waitForNavigation(), page.click(`button[name=revoke][value="${clients[0].clientId}"]`)]);
      assert.equal(new URL(page.url()).pathname, '/oauth2/authorizations');
      assert.equal(await page.locator(`button[name=revoke][value="${clients[0].clientId}"]`).count(), 0);
      assert.equal(await page.locator(`button[name=revoke][value="${clients[1].clientId}"]`).count(), 1);
      await context.close();
      assert.equal((await call(t.app, issued[0], 'GET', '/users')).status, 401);
      assert.equal((await call(t.app, issued[1], 'GET', '/users')).status, 200);
    });
  });
}
