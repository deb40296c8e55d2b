import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { setClientPublisher } from '../src/oauth/grants/clients.js';
import { browserSkip, launchBrowser } from './browser.js';
import {
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  skipUnless,
  tokenRequest,
  type Tenant,
  type TestApp,
} from './helpers.js';

/** Where the screenshots go (under dist/, so never committed); look at them after a change to the pages. */
const SHOTS = process.env.FSM_SCREENSHOTS ?? path.join('dist', 'screenshots');
const SIZES = { desktop: { width: 1280, height: 900 }, phone: { width: 375, height: 667 } } as const;
const DECISIONS = ['button[name=decision][value=allow]', 'button[name=decision][value=deny]'];

for (const dialect of DIALECTS) {
  describe(`the consent page in Chromium (${dialect})`, { skip: skipUnless(dialect) || browserSkip() }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    let browser: Browser;
    /** The client's callback: a real server, so the browser lands there and the code is in its URL. */
    let callback: http.Server;
    let CB = '';

    before(async () => {
      callback = http.createServer((_req, res) => res.end('back'));
      await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
      CB = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/cb`;
      fs.mkdirSync(SHOTS, { recursive: true });
      t = await createTestApp(dialect);
      t.app.config.rateLimitAuth = 0;
      tenant = await createTenant(t);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      callback?.close();
    });

    const codeUrl = (clientId: string, extra: Record<string, string> = {}) =>
      `${base}/oauth2/code?${new URLSearchParams({ response_type: 'code', client_id: clientId, scope: 'default', state: 'st', ...extra })}`;

    /** A fresh browser context (no session) of one size. */
    async function open(size: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
      const context = await browser.newContext({ viewport: size, deviceScaleFactor: 1 });
      await context.route(`${CB}**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/plain', body: 'back' }),
      );
      return { context, page: await context.newPage() };
    }

    async function signIn(page: Page) {
      await page.fill('input[name=login]', tenant.login);
      await page.fill('input[name=password]', tenant.password);
      await page.click('button[type=submit]');
    }

    /** Where an authorization ended: the consent page, or the client's callback with its code. */
    async function authorize(page: Page, clientId: string, extra: Record<string, string> = {}) {
      await page.goto(codeUrl(clientId, extra));
      await page.waitForURL((u) => u.href.startsWith(CB) || u.pathname === '/oauth2/code');
      await page.waitForLoadState();
      const url = new URL(page.url());
      return url.href.startsWith(CB)
        ? { consentShown: false, code: url.searchParams.get('code') }
        : { consentShown: (await page.locator(DECISIONS[0]).count()) === 1, code: null };
    }

    async function decisionsInView(page: Page, size: { width: number; height: number }, what: string) {
      for (const sel of DECISIONS) {
        const box = (await page.locator(sel).boundingBox())!;
        assert.ok(box, `${sel} rendered (${what})`);
        assert.ok(
          box.y >= 0 && box.y + box.height <= size.height,
          `${sel} within the viewport (${what}): ${JSON.stringify(box)}`,
        );
        assert.ok(box.x >= 0 && box.x + box.width <= size.width, `${sel} inside the screen width (${what})`);
        assert.ok(box.height >= 40, `${sel} tappable (${what})`);
      }
    }

    for (const [device, size] of Object.entries(SIZES)) {
      test(`${device} ${size.width}x${size.height}: every permission asked, Allow and Deny in view without scrolling; the summary expands`, async () => {
        const client = (allowPermissionChoice: boolean) =>
          createOAuthClient(t.database, {
            name: 'Northwind Scheduling & Dispatch for Field Crews',
            redirectUris: [CB],
            allowPermissionChoice,
            permissions: [...ALL_PERMISSIONS],
          });
        const fixed = await client(false);
        const { clientId } = await client(true);
        await setClientPublisher(t.database.db, fixed.clientId, 'Northwind Software Ltd');
        await setClientPublisher(t.database.db, clientId, 'Northwind Software Ltd');
        const { context, page } = await open(size);
        try {
          // Without choice: the summary, the list folded away, the decision on the first screen.
          await page.goto(codeUrl(fixed.clientId));
          await signIn(page);
          await page.waitForSelector(DECISIONS[0]);
          const height = await page.evaluate(() => document.documentElement.scrollHeight);
          await page.screenshot({ path: path.join(SHOTS, `consent-all-${device}-${dialect}.png`), fullPage: true });
          assert.ok(height <= size.height, `the whole page on one screen (${height} px)`);
          await decisionsInView(page, size, 'as shown');
          assert.ok(
            (await page.evaluate(() => document.documentElement.scrollWidth)) <= size.width,
            'no horizontal scrolling',
          );
          const areas = new Set(ALL_PERMISSIONS.map((p) => p.split('.')[0])).size;
          assert.equal(
            (await page.locator('.summary').innerText()).replace(/\s+/g, ' ').trim(),
            `Read and change everything in your account (all ${areas} areas)`,
          );
          assert.equal(await page.locator('details.permissions').getAttribute('open'), null);
          assert.equal(await page.getByText('Change jobs', { exact: true }).isVisible(), false);
          // Expanded (no script: <details>), each permission shows; the decision stays on screen.
          await page.click('details.permissions > summary');
          assert.equal(await page.locator('details.permissions').getAttribute('open'), '');
          assert.equal(await page.getByText('Change jobs', { exact: true }).isVisible(), true);
          assert.ok((await page.evaluate(() => document.documentElement.scrollHeight)) > height, 'the list opened');
          await page.screenshot({ path: path.join(SHOTS, `consent-open-${device}-${dialect}.png`) });
          await decisionsInView(page, size, 'list expanded');
          await page.getByText('Change visits', { exact: true }).scrollIntoViewIfNeeded();
          await decisionsInView(page, size, 'scrolled into the list');

          // With choice: the checkboxes are in view at once (PRODUCT §1's form), every one ticked;
          // the decision is still on the first screen and stays there while scrolling.
          await page.goto(codeUrl(clientId));
          await page.waitForSelector(DECISIONS[0]);
          await page.screenshot({ path: path.join(SHOTS, `consent-choice-${device}-${dialect}.png`) });
          await decisionsInView(page, size, 'choice, as shown');
          assert.equal(await page.locator('details.permissions').getAttribute('open'), '');
          assert.equal(await page.locator('input[name=permissions]').count(), ALL_PERMISSIONS.length);
          assert.equal(await page.locator('input[name=permissions]:checked').count(), ALL_PERMISSIONS.length);
          assert.equal(await page.locator('input[name=permissions][value="users.read"]').isVisible(), true);
          // It folds too.
          await page.click('details.permissions > summary');
          assert.equal(await page.locator('input[name=permissions][value="users.read"]').isVisible(), false);
          await page.click('details.permissions > summary');
          await page.locator('input[name=permissions][value="jobs.write"]').scrollIntoViewIfNeeded();
          await decisionsInView(page, size, 'scrolled to the middle of the list');
          await page.uncheck('input[name=permissions][value="jobs.write"]');
          await page.click(DECISIONS[0]);
          await page.waitForURL((u) => u.href.startsWith(CB));
          assert.ok(new URL(page.url()).searchParams.get('code'));
          const row = await t.database.db
            .selectFrom('oauth_codes')
            .select('permissions')
            .where('client_id', '=', clientId)
            .executeTakeFirstOrThrow();
          const granted = JSON.parse(row.permissions) as string[];
          assert.equal(granted.length, ALL_PERMISSIONS.length - 1);
          assert.ok(!granted.includes('jobs.write'));
        } finally {
          await context.close();
        }
      });
    }

    test('consent is remembered: the next authorization yields a code without the page; asked again when the permissions change, with prompt=consent, after revoking', async () => {
      const { clientId, clientSecret } = await createOAuthClient(t.database, {
        name: 'Ledger',
        redirectUris: [CB],
        permissions: ['users.read', 'jobs.read', 'jobs.write'],
      });
      await setClientPublisher(t.database.db, clientId, 'Ledger Books Ltd');
      const { context, page } = await open(SIZES.phone);
      try {
        await page.goto(codeUrl(clientId));
        await signIn(page);
        await page.waitForSelector(DECISIONS[0]);
        await decisionsInView(page, SIZES.phone, 'three permissions');
        assert.equal(
          (await page.locator('.summary').innerText()).replace(/\s+/g, ' ').trim(),
          'Read and change (1 area): Jobs Read only (1 area): Users',
        );
        await page.click(DECISIONS[0]);
        await page.waitForURL((u) => u.href.startsWith(CB));

        // Again, same browser: no page, a code (and state) at once.
        const again = await authorize(page, clientId);
        assert.equal(again.consentShown, false);
        assert.ok(again.code, 'a code without the page');
        assert.equal(new URL(page.url()).searchParams.get('state'), 'st');

        // prompt=consent shows it all the same, and Allow there keeps it remembered.
        assert.equal((await authorize(page, clientId, { prompt: 'consent' })).consentShown, true);
        await page.click(DECISIONS[0]);
        await page.waitForURL((u) => u.href.startsWith(CB));
        assert.equal((await authorize(page, clientId)).consentShown, false);

        // The client asks for more: the owner is asked again.
        await t.database.db
          .updateTable('oauth_clients')
          .set({ permissions: JSON.stringify(['users.read', 'jobs.read', 'jobs.write', 'visits.read']) })
          .where('client_id', '=', clientId)
          .execute();
        assert.equal((await authorize(page, clientId)).consentShown, true);
        await page.click(DECISIONS[0]);
        await page.waitForURL((u) => u.href.startsWith(CB));
        assert.equal((await authorize(page, clientId)).consentShown, false);

        // Revoked on the connected-applications page: asked again.
        const code = new URL(page.url()).searchParams.get('code')!;
        const token = await tokenRequest(t.app, {
          grant_type: 'authorization_code',
          code,
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uri: CB,
        });
        assert.equal(token.status, 200, JSON.stringify(token.body));
        await page.goto(`${base}/oauth2/authorizations`);
        await page.waitForSelector('h1:text("Connected applications")');
        // The publisher, and a summary by area with the full list folded away.
        const app = page.locator('.app', { has: page.locator(`button[name=revoke][value="${clientId}"]`) });
        assert.match(await app.locator('.publisher').innerText(), /Run by Ledger Books Ltd/);
        assert.equal(
          (await app.locator('.summary').innerText()).replace(/\s+/g, ' ').trim(),
          'Read and change (1 area): Jobs Read only (2 areas): Users, Visits',
        );
        for (const [device, size] of Object.entries(SIZES)) {
          await page.setViewportSize(size);
          await page.screenshot({ path: path.join(SHOTS, `authorizations-${device}-${dialect}.png`), fullPage: true });
        }
        await page.setViewportSize(SIZES.phone);
        await Promise.all([page.waitForNavigation(), page.click(`button[name=revoke][value="${clientId}"]`)]);
        assert.match(await page.locator('p.done[role=status]').innerText(), /Ledger no longer has access/);
        assert.equal(await page.locator(`button[name=revoke][value="${clientId}"]`).count(), 0);
        await page.screenshot({
          path: path.join(SHOTS, `authorizations-revoked-phone-${dialect}.png`),
          fullPage: true,
        });
        assert.equal((await authorize(page, clientId)).consentShown, true);
      } finally {
        await context.close();
      }
    });
  });
}
