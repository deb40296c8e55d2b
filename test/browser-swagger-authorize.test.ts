import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchBrowser } from './browser.js';
import { call, createOAuthClient, createTenant, createTestApp, type Tenant, type TestApp } from './helpers.js';

/** The reference page's Authorize button is an OAuth client of its own: it must complete the flow. */
describe('Swagger UI Authorize completes the OAuth flow in Chromium', { skip: browserSkip() }, () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  let browser: Browser;

  before(async () => {
    t = await createTestApp('sqlite');
    t.config.rateLimitAuth = 0;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    // Before the OpenAPI document is first built (the tests' conformance check reads it at the first request).
    t.config.publicUrl = base;
    tenant = await createTenant(t);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('Authorize: popup sign-in and consent, back through /docs/oauth2-redirect.html, token exchanged, API callable', async () => {
    const { clientId, clientSecret } = await createOAuthClient(t.database, {
      redirectUris: [`${base}/docs/oauth2-redirect.html`],
      name: 'API reference',
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const outside: string[] = [];
    await context.route('**/*', (route) => {
      if (route.request().url().startsWith(base)) return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    await page.goto(`${base}/docs`);
    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    // The scope's description is plain text (Swagger UI does not render Markdown there): no raw backticks.
    const dialogText = (await dialog.textContent())!;
    assert.match(dialogText, /registered permission set \(collection\.read and collection\.write/);
    assert.ok(!dialogText.includes('`'), dialogText);
    await dialog.locator('#client_id_authorizationCode').fill(clientId);
    await dialog.locator('#client_secret_authorizationCode').fill(clientSecret);
    // The checkbox itself is hidden behind its styled label.
    await dialog.locator('label[for="default-authorizationCode-checkbox-oauth2"]').click();
    assert.ok(await dialog.locator('#default-authorizationCode-checkbox-oauth2').isChecked());
    const [popup] = await Promise.all([
      context.waitForEvent('page'),
      dialog.locator('button[aria-label="Apply given OAuth2 credentials"]').click(),
    ]);
    await popup.waitForSelector('input[name=login]');
    await popup.fill('input[name=login]', tenant.login);
    await popup.fill('input[name=password]', tenant.password);
    await popup.click('button[type=submit]');
    await popup.waitForSelector('button[name=decision][value=allow]');
    assert.ok((await popup.textContent('body'))!.includes('API reference'));
    await Promise.all([popup.waitForEvent('close'), popup.click('button[name=decision][value=allow]')]);

    // The redirect page handed the code to Swagger UI, which exchanged it at the token endpoint.
    await dialog
      .locator('button[aria-label="Remove authorization"], button.logout')
      .first()
      .waitFor({ timeout: 20_000 });
    const accessToken = await page.evaluate(() => {
      const auth = (
        window as unknown as {
          ui: { authSelectors: { authorized(): { toJS(): Record<string, { token?: { access_token?: string } }> } } };
        }
      ).ui.authSelectors
        .authorized()
        .toJS();
      return auth.oauth2?.token?.access_token;
    });
    assert.match(String(accessToken), /^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/);
    assert.equal((await call(t.app, accessToken!, 'GET', '/users')).status, 200);
    assert.deepEqual(outside, []);
    await context.close();
  });
});
