import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser } from './browser.js';
import { DIALECTS, addUser, appWithTenants, call, skipUnless, type Tenant, type TestApp } from './helpers.js';
import { sentQuote } from './share-links.test.js';

/** Where the screenshots go (under dist/, never committed): look at them after a change to the pages. */
const SHOTS = process.env.FSM_SCREENSHOTS ?? path.join('dist', 'screenshots');
const WIDTHS = { phone: 375, desktop: 1280 } as const;

/** Draws a zigzag across the signature pad with pointer (mouse) events. */
async function sign(page: Page): Promise<void> {
  await page.locator('canvas#signature').scrollIntoViewIfNeeded();
  const box = (await page.locator('canvas#signature').boundingBox())!;
  await page.mouse.move(box.x + 15, box.y + box.height / 2);
  await page.mouse.down();
  for (let i = 1; i <= 12; i++)
    await page.mouse.move(box.x + 15 + (i * (box.width - 30)) / 12, box.y + (i % 2 ? 25 : box.height - 25), {
      steps: 4,
    });
  await page.mouse.up();
}

for (const dialect of DIALECTS) {
  describe(`the quote's share page in Chromium (${dialect})`, { skip: skipUnless(dialect) || browserSkip() }, () => {
    let t: TestApp;
    let a: Tenant;
    let base: string;
    let browser: Browser;
    before(async () => {
      fs.mkdirSync(SHOTS, { recursive: true });
      ({ t, a } = await appWithTenants(dialect, { env: { RATE_LIMIT_AUTH: '0' } }));
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    for (const [device, width] of Object.entries(WIDTHS)) {
      test(`${device} (${width} px): fits the screen, a signature drawn with the pointer accepts the quote`, async () => {
        const { quote } = await sentQuote(t, a);
        const share = (await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`)).body.quotes[0].shareUrl;
        const url = `${base}${new URL(share).pathname}`;
        const context = await browser.newContext({ viewport: { width, height: 800 }, deviceScaleFactor: 1 });
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        page.on('console', (m) => m.type() === 'error' && !/status of 422/.test(m.text()) && errors.push(m.text()));
        try {
          await page.goto(url);
          const { scroll, inner } = await page.evaluate(() => ({
            scroll: document.documentElement.scrollWidth,
            inner: window.innerWidth,
          }));
          assert.ok(scroll <= inner, `${scroll} px wide in a ${inner} px window`);
          assert.ok(await page.isVisible('text=Alpha'), "the company's name");
          await page.screenshot({ path: path.join(SHOTS, `share-quote-${device}-${dialect}.png`), fullPage: true });
          // Accepting without a signature: refused on the page, nothing changed.
          await page.fill('input[name=signerName]', 'Jane Customer');
          await page.click('button[name=decision][value=accept]');
          assert.match(await page.locator('.error').innerText(), /draw your signature/i);
          assert.equal((await call(t.app, a.token, 'GET', `/quotes/${quote.id}`)).body.quotes[0].state, 'sent');
          await page.fill('input[name=signerName]', 'Jane Customer');
          await sign(page);
          const value = await page.inputValue('input[name=signature]');
          assert.match(value, /^data:image\/png;base64,/, errors.join(' / '));
          await page.screenshot({
            path: path.join(SHOTS, `share-quote-signed-${device}-${dialect}.png`),
            fullPage: true,
          });
          await page.click('button[name=decision][value=accept]');
          await page.waitForSelector('.state');
          assert.match(await page.locator('.state').innerText(), /accepted/);
          await page.screenshot({
            path: path.join(SHOTS, `share-quote-accepted-${device}-${dialect}.png`),
            fullPage: true,
          });
          const q = (await call(t.app, a.token, 'GET', `/quotes/${quote.id}?fields=*`)).body.quotes[0];
          assert.equal(q.state, 'accepted');
          assert.equal(q.acceptance.signerName, 'Jane Customer');
          const file = await call(t.app, a.token, 'GET', `/files/${q.acceptance.signature.id}?fields=mimeType,size`);
          assert.equal(file.body.files[0].mimeType, 'image/png');
          assert.ok(file.body.files[0].size > 500, 'a drawn signature, not an empty canvas');
          assert.deepEqual(errors, [], 'no script error nor CSP violation');
        } finally {
          await context.close();
        }
      });
    }

    test('without JavaScript the page reads and a quote is declined', async () => {
      const { quote } = await sentQuote(t, a);
      const share = (await call(t.app, a.token, 'POST', `/quotes/${quote.id}/shareLink`)).body.quotes[0].shareUrl;
      const context = await browser.newContext({ viewport: { width: 375, height: 800 }, javaScriptEnabled: false });
      const page = await context.newPage();
      try {
        await page.goto(`${base}${new URL(share).pathname}`);
        assert.ok(await page.isVisible('text=140.48 USD'));
        await page.fill('textarea[name=reason]', 'We found someone closer');
        await page.click('button[name=decision][value=decline]');
        await page.waitForSelector('.state');
        await page.screenshot({ path: path.join(SHOTS, `share-quote-declined-nojs-${dialect}.png`), fullPage: true });
        const q = (await call(t.app, a.token, 'GET', `/quotes/${quote.id}?fields=*`)).body.quotes[0];
        assert.equal(q.state, 'declined');
        assert.equal(q.declineReason, 'We found someone closer');
      } finally {
        await context.close();
      }
    });
  });

  describe(`the job's booking page in Chromium (${dialect})`, { skip: skipUnless(dialect) || browserSkip() }, () => {
    let t: TestApp;
    let a: Tenant;
    let base: string;
    let browser: Browser;
    before(async () => {
      fs.mkdirSync(SHOTS, { recursive: true });
      ({ t, a } = await appWithTenants(dialect, { env: { RATE_LIMIT_AUTH: '0' } }));
      await t.database.db
        .updateTable('accounts')
        .set({ time_zone: 'Europe/London' })
        .where('id', '=', a.accountId)
        .execute();
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    for (const javaScriptEnabled of [true, false])
      test(`phone (375 px${javaScriptEnabled ? '' : ', no JavaScript'}): fits the screen, choosing a slot books it`, async () => {
        const place = { lat: 51.5, lng: -0.1 };
        const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
        const crew = await addUser(t, a, 'employee', {
          firstName: javaScriptEnabled ? 'Robin' : 'Alex',
          workingHours: days.map((day) => ({ day, start: '08:00', end: '12:00' })),
          homeLocation: place,
        });
        const skill = (await call(t.app, a.token, 'POST', '/skills', { skills: [{ name: `Gas ${crew.id}` }] })).body
          .skills[0].id;
        await call(t.app, a.token, 'PATCH', `/users/${crew.id}`, { users: [{ skills: [{ id: skill }] }] });
        const job = (
          await call(t.app, a.token, 'POST', '/jobs', {
            jobs: [
              {
                title: 'Boiler service',
                requiredSkills: [{ id: skill }],
                address: { line1: '1 High St', location: place },
              },
            ],
          })
        ).body.jobs[0];
        const link = (await call(t.app, a.token, 'POST', `/jobs/${job.id}/bookingLink`)).body.jobs[0].bookingUrl;
        const context = await browser.newContext({ viewport: { width: 375, height: 800 }, javaScriptEnabled });
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
        try {
          await page.goto(`${base}${new URL(link).pathname}`);
          const { scroll, inner } = await page.evaluate(() => ({
            scroll: document.documentElement.scrollWidth,
            inner: window.innerWidth,
          }));
          assert.ok(scroll <= inner, `${scroll} px wide in a ${inner} px window`);
          assert.ok(await page.isVisible('text=Alpha'), "the company's name");
          const suffix = javaScriptEnabled ? '' : '-nojs';
          await page.screenshot({ path: path.join(SHOTS, `booking-phone${suffix}-${dialect}.png`), fullPage: true });
          const button = page.locator('button[name=slot]').first();
          const value = (await button.getAttribute('value'))!;
          assert.match(value, new RegExp(`^\\d{4}-\\d{2}-\\d{2}T\\d{2}:00:00\\.000Z\\|${crew.id}$`));
          await button.click();
          await page.waitForSelector('.state');
          const confirmed = await page.locator('.state').innerText();
          assert.match(confirmed, /You are booked: we will arrive .+, \d{2}:\d{2}–\d{2}:\d{2} (GMT|BST)/);
          await page.screenshot({
            path: path.join(SHOTS, `booking-phone-booked${suffix}-${dialect}.png`),
            fullPage: true,
          });
          const visits = (await call(t.app, a.token, 'GET', `/visits?where=job.id=${job.id}&fields=*`)).body.visits;
          assert.equal(visits.length, 1);
          assert.equal(visits[0].arrivalWindowStart, value.split('|')[0]);
          assert.deepEqual(visits[0].user, { id: crew.id });
          assert.deepEqual(errors, [], 'no script error nor CSP violation');
        } finally {
          await context.close();
        }
      });
  });
}
