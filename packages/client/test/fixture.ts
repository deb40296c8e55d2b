import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { FieldService, type FieldServiceOptions } from '@fieldservice/client';
// The server's own test helpers, compiled by the root build (dist/test): one copy, reused.
import {
  createOAuthClient,
  createTenant,
  createTestApp,
  type Tenant,
  type TestApp,
} from '../../../dist/test/helpers.js';
import type { Dialect } from '../../../dist/src/db/index.js';

export { DIALECTS, skipUnless } from '../../../dist/test/helpers.js';
export { browserSkip, launchBrowser } from '../../../dist/test/browser.js';
export { startReceiver, until } from '../../../dist/test/receiver.js';

export interface Served {
  t: TestApp;
  tenant: Tenant;
  /** The server's origin: its issuer and API base. */
  base: string;
  close(): Promise<void>;
}

/** The real server on one dialect, listening on a free port of 127.0.0.1, with one account. */
export async function serve(dialect: Dialect): Promise<Served> {
  const t = await createTestApp(dialect);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  t.config.publicUrl = base;
  t.config.webhooksAllowPrivateUrls = true;
  return { t, tenant: await createTenant(t), base, close: () => t.close() };
}

/** A registered, certified client for this server, with one redirect URI. */
export async function registeredClient(s: Served, redirectUri: string) {
  return createOAuthClient(s.t.database, { redirectUris: [redirectUri], name: 'Client package test' });
}

/** A client signed in with the tenant's Administrator token (issued directly: the OAuth flow has its own test). */
export async function signedInClient(s: Served, opts: Partial<FieldServiceOptions> = {}): Promise<FieldService> {
  return FieldService.discover({
    issuer: s.base,
    clientId: s.tenant.clientId,
    clientSecret: 'unused',
    redirectUri: 'http://127.0.0.1/callback',
    tokens: { accessToken: s.tenant.token, expiresAt: Date.now() + 3_600_000 },
    ...opts,
  });
}

/** The client application's redirect URI: a tiny server handing over each URL it receives. */
export async function callbackServer() {
  const waiting: ((url: URL) => void)[] = [];
  const server = http.createServer((req, res) => {
    res.end('received');
    waiting.shift()?.(new URL(req.url!, 'http://127.0.0.1'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise<URL>((resolve) => waiting.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The owner's part in Chromium: the sign-in form, then consent (PRODUCT.md §1 names the fields). */
export async function ownerAllowsInChromium(
  browser: Browser,
  url: URL | string,
  owner: { login: string; password: string },
): Promise<void> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(String(url));
    await page.fill('input[name=login]', owner.login);
    await page.fill('input[name=password]', owner.password);
    await page.click('button[type=submit]');
    await page.click('button[name=decision][value=allow]');
    await page.waitForURL((u) => u.pathname === '/callback');
  } finally {
    await context.close();
  }
}
