import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { FieldService, type FieldServiceError, type Tokens } from '@fieldservice/client';
import {
  browserSkip,
  callbackServer,
  DIALECTS,
  launchBrowser,
  ownerAllowsInChromium,
  registeredClient,
  serve,
  skipUnless,
  type Served,
} from './fixture.js';

for (const dialect of DIALECTS) {
  describe(
    `client package: OAuth from discovery, sign-in in Chromium (${dialect})`,
    { skip: skipUnless(dialect) || browserSkip() },
    () => {
      let s: Served;
      let browser: Browser;
      let callback: Awaited<ReturnType<typeof callbackServer>>;

      before(async () => {
        s = await serve(dialect);
        callback = await callbackServer();
        browser = await launchBrowser();
      });
      after(async () => {
        await browser?.close();
        await callback?.close();
        await s?.close();
      });

      const status = async (token: string) =>
        (await fetch(`${s.base}/users`, { headers: { authorization: `Bearer ${token}`, 'x-version': '1.0' } })).status;

      test('code flow with PKCE, state and iss; refresh on expiry and on one 401; revocation', async () => {
        const { clientId, clientSecret } = await registeredClient(s, callback.uri);
        let clientNow = s.t.clock.now; // the client's clock, moved apart from the server's below
        const saved: (Tokens | undefined)[] = [];
        const sent: { url: string; auth: string | null }[] = [];
        const fsm = await FieldService.discover({
          issuer: s.base,
          clientId,
          clientSecret,
          redirectUri: callback.uri,
          now: () => clientNow,
          onTokens: (t) => {
            saved.push(t);
          },
          fetch: (r) => {
            sent.push({ url: r.url, auth: r.headers.get('authorization') });
            return fetch(r);
          },
        });

        const { url, state, codeVerifier } = await fsm.authorizationUrl();
        assert.equal(url.origin + url.pathname, `${s.base}/oauth2/code`);
        assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
        assert.equal(url.searchParams.get('access_type'), 'offline');
        assert.equal(url.searchParams.get('state'), state);
        const arrived = callback.next();
        await ownerAllowsInChromium(browser, url, s.tenant);
        const back = await arrived;
        assert.equal(back.searchParams.get('iss'), s.base);

        // Another issuer's iss (a mix-up) or another state is refused before the code is used.
        const forged = new URL(back);
        forged.searchParams.set('iss', 'https://other-issuer.example');
        await assert.rejects(fsm.signIn(forged, { state, codeVerifier }));
        await assert.rejects(fsm.signIn(back, { state: 'not-the-state', codeVerifier }));
        assert.equal(saved.length, 0);

        const tokens = await fsm.signIn(back, { state, codeVerifier });
        assert.equal(typeof tokens.refreshToken, 'string');
        assert.deepEqual(saved, [tokens]);
        const logins = [];
        for await (const u of fsm.list('users', { fields: ['login'] })) logins.push(u.login);
        assert.deepEqual(logins, [s.tenant.login]);

        // Expiry: an hour later on both clocks, the client refreshes before calling.
        s.t.clock.now += 3_600_000;
        clientNow += 3_600_000;
        sent.length = 0;
        await fsm.get('users', s.tenant.adminId);
        assert.equal(saved.length, 2);
        const second = saved[1]!;
        assert.notEqual(second.accessToken, tokens.accessToken);
        assert.equal(second.refreshToken, tokens.refreshToken); // the server keeps the refresh token
        assert.deepEqual(
          sent.map((r) => r.auth),
          [`Bearer ${second.accessToken}`],
        );
        assert.equal(await status(tokens.accessToken), 401);

        // One 401: the server's clock runs ahead, the client thinks its token is fresh; it refreshes once and repeats.
        s.t.clock.now += 3_600_000;
        sent.length = 0;
        const { item: admin } = await fsm.get('users', s.tenant.adminId, { fields: ['login'] });
        assert.equal(admin.login, s.tenant.login);
        assert.equal(saved.length, 3);
        const third = saved[2]!;
        assert.deepEqual(
          sent.map((r) => r.auth),
          [`Bearer ${second.accessToken}`, `Bearer ${third.accessToken}`],
        );

        // Revocation ends the grant: the access token, the refresh token, and the client's session.
        await fsm.revoke();
        assert.equal(saved.at(-1), undefined);
        assert.equal(await status(third.accessToken), 401);
        const refresh = await fetch(`${s.base}/oauth2/token`, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken! }),
        });
        assert.equal(refresh.status, 400);
        assert.equal(((await refresh.json()) as { error: string }).error, 'invalid_grant');
        await assert.rejects(fsm.get('users', s.tenant.adminId), /not signed in/);
      });

      test('without a refresh token a 401 is thrown as a typed error, not retried', async () => {
        const { clientId, clientSecret } = await registeredClient(s, callback.uri);
        const fsm = await FieldService.discover({ issuer: s.base, clientId, clientSecret, redirectUri: callback.uri });
        const { url, state, codeVerifier } = await fsm.authorizationUrl({ accessType: 'online' });
        const arrived = callback.next();
        await ownerAllowsInChromium(browser, url, s.tenant);
        const tokens = await fsm.signIn(await arrived, { state, codeVerifier });
        assert.equal(tokens.refreshToken, undefined);
        s.t.clock.now += 3_700_000;
        await assert.rejects(
          fsm.get('users', s.tenant.adminId),
          (e: FieldServiceError) => e.status === 401 && e.code === 1011,
        );
      });
    },
  );
}
