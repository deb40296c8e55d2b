import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { setClientPublisher } from '../src/oauth/grants/clients.js';
import { browserSkip, launchBrowser } from './browser.js';
import { createOAuthClient, createTenant, createTestApp, skipUnless, type Tenant, type TestApp } from './helpers.js';

/** Where the screenshots go (under dist/, so never committed); look at them after a change to the pages. */
const SHOTS = process.env.FSM_SCREENSHOTS ?? path.join('dist', 'screenshots');
const WIDTHS = { phone: 390, desktop: 1280 } as const;

// The pages do not depend on the storage: one dialect is enough here (the flows run on both elsewhere).
describe('auth pages at phone and desktop width, in Chromium', { skip: skipUnless('sqlite') || browserSkip() }, () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  let browser: Browser;

  before(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    t = await createTestApp('sqlite');
    t.app.config.rateLimitAuth = 0;
    tenant = await createTenant(t);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const [device, width] of Object.entries(WIDTHS)) {
    test(`${device} (${width} px): login and consent fit the screen; "Not you?" returns to the login form`, async () => {
      const { clientId } = await createOAuthClient(t.database, {
        name: 'Field Scheduler Pro',
        redirectUris: ['http://127.0.0.1:9/cb'],
        allowPermissionChoice: true,
        permissions: ['users.read', 'jobs.read', 'jobs.write', 'visits.read', 'visits.write', 'files.read'],
      });
      await setClientPublisher(t.database.db, clientId, 'Scheduling Software Ltd');
      const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
      const page = await context.newPage();
      const fits = async (what: string) => {
        const { scroll, inner } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          inner: window.innerWidth,
        }));
        assert.ok(scroll <= inner, `${what}: ${scroll} px wide in a ${inner} px window`);
      };
      try {
        await page.goto(
          `${base}/oauth2/code?${new URLSearchParams({ response_type: 'code', client_id: clientId, scope: 'default', state: 'x' })}`,
        );
        await fits('login');
        await page.screenshot({ path: path.join(SHOTS, `login-${device}.png`), fullPage: true });
        await page.fill('input[name=login]', tenant.login);
        await page.fill('input[name=password]', tenant.password);
        await page.click('button[type=submit]');
        await page.waitForSelector('button[name=decision][value=allow]');
        await fits('consent');
        await page.screenshot({ path: path.join(SHOTS, `consent-${device}.png`), fullPage: true });

        const text = (await page.textContent('body'))!;
        assert.match(text, /Signed in as Ada Admin \(admin/);
        assert.match(text, /Field Scheduler Pro is run by Scheduling Software Ltd/);
        assert.deepEqual(await page.locator('legend').allTextContents(), ['Users', 'Jobs', 'Visits', 'Files']);
        // With the permission choice, the list of checkboxes is unfolded at once.
        assert.equal(await page.locator('details.permissions').getAttribute('open'), '');
        assert.equal(
          await page
            .locator('label[for=p2]')
            .innerText()
            .then((s) => s.split('\n')[0]),
          'Change jobs jobs.write',
        );
        // Each checkbox's label is what a screen reader announces for it.
        assert.equal(await page.getByLabel('Read visits').getAttribute('value'), 'visits.read');
        for (const sel of ['button[name=decision][value=allow]', 'button[name=decision][value=deny]']) {
          const box = (await page.locator(sel).boundingBox())!;
          assert.ok(box.x >= 0 && box.x + box.width <= width, `${sel} inside the screen`);
        }

        await page.click('text=Not you?');
        await page.waitForSelector('input[name=password]');
        assert.match(page.url(), /\/oauth2\/code\?/);
        assert.equal(
          (await context.cookies()).some((c) => c.name === 'fsm_session'),
          false,
        );
      } finally {
        await context.close();
      }
    });
  }
});
