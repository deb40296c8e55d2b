import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { buildApp } from '../src/app.js';
import { hashToken } from '../src/auth/secrets.js';
import { openDatabase, type Database } from '../src/db/index.js';
import { certifyClient, ClientError, registerClient } from '../src/oauth/grants/clients.js';
import { isAllowedRedirectUri, resolveRedirectUri } from '../src/oauth/grants/redirect-uri.js';
import {
  authorizeWithInject,
  call,
  createTenant,
  createTestApp,
  DIALECTS,
  formAction,
  injectBrowser,
  inputValue,
  skipUnless,
  tokenRequest,
  type Tenant,
  type TestApp,
} from './helpers.js';
import { ownerApproves } from './owner-fetch.js';

const insecure = { [oauth.allowInsecureRequests]: true };
const APP_SCHEME = 'com.example.crew:/callback';
const LOOPBACK = 'http://127.0.0.1/cb';

const verifierPair = () => {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
};

describe('redirect URIs of public clients (RFC 8252)', () => {
  test('a private-use scheme needs a period and a public client; any-port loopback is 127.0.0.1 and [::1] only', () => {
    assert.equal(isAllowedRedirectUri(APP_SCHEME, true), true);
    assert.equal(isAllowedRedirectUri(APP_SCHEME, false), false);
    assert.equal(isAllowedRedirectUri('crew:/callback', true), false);
    assert.equal(isAllowedRedirectUri('com.example.crew://host/cb', true), false);
    assert.equal(isAllowedRedirectUri('com.example.crew:/cb#x', true), false);
    assert.equal(isAllowedRedirectUri('javascript:alert(1)', true), false);
    const reg = [LOOPBACK, 'http://[::1]:8000/cb', 'http://localhost:3000/cb', APP_SCHEME];
    assert.equal(resolveRedirectUri(reg, 'http://127.0.0.1:51234/cb', true), 'http://127.0.0.1:51234/cb');
    assert.equal(resolveRedirectUri(reg, 'http://[::1]:9/cb', true), 'http://[::1]:9/cb');
    assert.equal(resolveRedirectUri(reg, 'http://localhost:4000/cb', true), undefined);
    assert.equal(resolveRedirectUri(reg, 'http://127.0.0.1:51234/other', true), undefined);
    assert.equal(resolveRedirectUri(reg, 'http://127.0.0.1:51234/cb?x=1', true), undefined);
    assert.equal(resolveRedirectUri(reg, 'https://127.0.0.1:51234/cb', true), undefined);
    assert.equal(resolveRedirectUri(reg, APP_SCHEME, true), APP_SCHEME);
    // Confidential clients keep exact matching.
    assert.equal(resolveRedirectUri(reg, 'http://127.0.0.1:51234/cb', false), undefined);
    assert.equal(resolveRedirectUri(reg, APP_SCHEME, false), undefined);
  });
});

for (const dialect of DIALECTS) {
  describe(`public clients (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let clientId: string;
    let issuer: URL;

    before(async () => {
      t = await createTestApp(dialect);
      tenant = await createTenant(t);
      const reg = await registerClient(t.database, {
        name: 'Crew app',
        redirectUris: [LOOPBACK, APP_SCHEME],
        public: true,
      });
      assert.equal(reg.clientSecret, null);
      clientId = reg.clientId;
      await certifyClient(t.database, clientId);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      t.config.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      issuer = new URL(t.config.publicUrl);
    });
    after(() => t?.close());

    const api = async (token: string) => (await call(t.app, token, 'GET', '/users')).status;

    /** Code flow through the pages; returns the token answer. */
    async function codeTokens(redirectUri = APP_SCHEME) {
      const { verifier, challenge } = verifierPair();
      const browser = injectBrowser(t.app);
      const { location, code } = await authorizeWithInject(
        browser,
        {
          client_id: clientId,
          redirect_uri: redirectUri,
          access_type: 'offline',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        },
        tenant,
      );
      assert.ok(code, location.toString());
      return tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      });
    }

    test('registration: no secret shown, a hash nobody knows stored; private-use schemes refused for confidential clients', async () => {
      const row = await t.database.db
        .selectFrom('oauth_clients')
        .select(['is_public', 'secret_hash'])
        .where('client_id', '=', clientId)
        .executeTakeFirstOrThrow();
      assert.equal(row.is_public, 1);
      assert.match(row.secret_hash, /^[0-9a-f]{64}$/);
      await assert.rejects(
        registerClient(t.database, { name: 'Web', redirectUris: [APP_SCHEME] }),
        (e: Error) => e instanceof ClientError && /private-use|https/.test(e.message),
      );
      await assert.rejects(
        registerClient(t.database, { name: 'App', redirectUris: ['crew:/cb'], public: true }),
        ClientError,
      );
    });

    test('discovery lists none for the token and revocation endpoints, not for introspection', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
      const m = JSON.parse(res.body);
      assert.ok(m.token_endpoint_auth_methods_supported.includes('none'));
      assert.ok(m.token_endpoint_auth_methods_supported.includes('client_secret_basic'));
      assert.ok(m.revocation_endpoint_auth_methods_supported.includes('none'));
      assert.ok(!m.introspection_endpoint_auth_methods_supported.includes('none'));
    });

    test('oauth4webapi with oauth.None(): code + PKCE on any loopback port, rotation, reuse ends the grant, revocation', async () => {
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
      const client: oauth.Client = { client_id: clientId };
      const redirect = 'http://127.0.0.1:49152/cb'; // the port the app's listener got
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirect,
        scope: 'default',
        state,
        access_type: 'offline',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();
      const callback = await ownerApproves(url, { login: tenant.login, password: tenant.password });
      assert.equal(callback.origin + callback.pathname, redirect);
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirect, verifier, insecure),
      );
      assert.equal(typeof tokens.refresh_token, 'string');
      assert.equal(await api(tokens.access_token), 200);

      const refresh = (token: string) => oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, insecure);
      const second = await oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!));
      // Rotation: a new refresh token, and the old one ended.
      assert.equal(typeof second.refresh_token, 'string');
      assert.notEqual(second.refresh_token, tokens.refresh_token);
      assert.equal(await api(second.access_token), 200);
      const third = await oauth.processRefreshTokenResponse(as, client, await refresh(second.refresh_token!));
      assert.equal(await api(third.access_token), 200);

      // The replaced token presented again: invalid_grant, and every token of the grant ends.
      await assert.rejects(
        oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!)),
        (err: oauth.ResponseBodyError) => err.error === 'invalid_grant',
      );
      assert.equal(await api(third.access_token), 401);
      assert.equal(await api(second.access_token), 401);
      await assert.rejects(
        oauth.processRefreshTokenResponse(as, client, await refresh(third.refresh_token!)),
        (err: oauth.ResponseBodyError) => err.error === 'invalid_grant',
      );

      // Revocation by client_id alone (a fresh grant).
      const fresh = await codeTokens(LOOPBACK);
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, oauth.None(), fresh.body.refresh_token, insecure),
      );
      assert.equal(await api(fresh.body.access_token), 401);
    });

    test('a secret sent by a public client is invalid_client (401, WWW-Authenticate: Basic), even an empty one', async () => {
      const fresh = await codeTokens();
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      const refresh = { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token };
      const basic = (secret: string) => ({
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      });
      for (const headers of [basic(''), basic('guess')]) {
        const r = await tokenRequest(t.app, refresh, headers);
        assert.equal(r.status, 401);
        assert.equal(r.body.error, 'invalid_client');
        assert.match(String(r.headers['www-authenticate']), /^Basic/);
      }
      for (const secret of ['', 'guess']) {
        const r = await tokenRequest(t.app, { ...refresh, client_id: clientId, client_secret: secret });
        assert.equal(r.status, 401);
        assert.equal(r.body.error, 'invalid_client');
      }
      // Revocation refuses a secret too; introspection refuses a public client altogether.
      const rev = await tokenRequest(
        t.app,
        { token: fresh.body.access_token, client_id: clientId, client_secret: 'x' },
        {},
        '/oauth2/revoke',
      );
      assert.equal(rev.status, 401);
      const intro = await tokenRequest(
        t.app,
        { token: fresh.body.access_token, client_id: clientId },
        {},
        '/oauth2/introspect',
      );
      assert.equal(intro.status, 401);
      assert.equal(intro.body.error, 'invalid_client');
      // None of this used the refresh token up: it still works, by client_id alone.
      const ok = await tokenRequest(t.app, { ...refresh, client_id: clientId });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(typeof ok.body.refresh_token, 'string');
    });

    test('without a PKCE challenge the authorization request is redirected back with invalid_request', async () => {
      const browser = injectBrowser(t.app);
      const res = await browser.request(
        'GET',
        `/oauth2/code?${new URLSearchParams({ response_type: 'code', scope: 'default', client_id: clientId, redirect_uri: APP_SCHEME })}`,
      );
      assert.equal(res.statusCode, 302);
      const loc = new URL(res.headers.location as string);
      assert.equal(loc.protocol, 'com.example.crew:');
      assert.equal(loc.searchParams.get('error'), 'invalid_request');
      assert.equal(loc.searchParams.get('iss'), t.config.publicUrl);
      // localhost does not get the any-port rule: an error page, no redirect.
      const page = await browser.request(
        'GET',
        `/oauth2/code?${new URLSearchParams({ response_type: 'code', scope: 'default', client_id: clientId, redirect_uri: 'http://localhost:4000/cb' })}`,
      );
      assert.equal(page.statusCode, 400);
    });

    test('the consent page says the app runs on the owner’s device; a confidential client’s does not', async () => {
      const browser = injectBrowser(t.app);
      const { challenge } = verifierPair();
      const q = (id: string, extra: Record<string, string> = {}) =>
        `/oauth2/code?${new URLSearchParams({ response_type: 'code', scope: 'default', client_id: id, ...extra })}`;
      let page = await browser.request(
        'GET',
        q(clientId, {
          redirect_uri: APP_SCHEME,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          prompt: 'consent',
        }),
      );
      assert.match(page.body, /name="password"/);
      const login = await browser.request('POST', formAction(page.body), {
        csrf: inputValue(page.body, 'csrf'),
        login: tenant.login,
        password: tenant.password,
      });
      page = await browser.request('GET', login.headers.location as string);
      assert.match(page.body, /runs on your device/);
      page = await browser.request('GET', q(tenant.clientId, { prompt: 'consent' }));
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, /runs on your device/);
    });

    test('a confidential client still gets no refresh token on refresh and cannot skip its secret', async () => {
      const browser = injectBrowser(t.app);
      const { clientId: cid, clientSecret } = await registerClient(t.database, {
        name: 'Server app',
        redirectUris: ['https://server.example/cb'],
      });
      await certifyClient(t.database, cid);
      const { verifier, challenge } = verifierPair();
      const { code } = await authorizeWithInject(
        browser,
        { client_id: cid, access_type: 'offline', code_challenge: challenge, code_challenge_method: 'S256' },
        tenant,
      );
      // PKCE does not stand in for a confidential client's secret.
      const bare = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: code!,
        client_id: cid,
        code_verifier: verifier,
      });
      assert.equal(bare.status, 401);
      assert.equal(bare.body.error, 'invalid_client');
      const { code: code2 } = await authorizeWithInject(
        browser,
        { client_id: cid, access_type: 'offline', code_challenge: challenge, code_challenge_method: 'S256' },
        tenant,
      );
      const got = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: code2!,
        client_id: cid,
        client_secret: clientSecret,
        code_verifier: verifier,
      });
      assert.equal(got.status, 200, JSON.stringify(got.body));
      const r = await tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: got.body.refresh_token,
        client_id: cid,
        client_secret: clientSecret,
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.refresh_token, undefined);
      const bareRefresh = await tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: got.body.refresh_token,
        client_id: cid,
      });
      assert.equal(bareRefresh.status, 401);
    });

    test('rotation race: two processes presenting one refresh token at once never both succeed', async () => {
      // A second server on the same database, with its own connections (another process's view).
      const other: Database = openDatabase({
        databaseUrl: t.config.databaseUrl,
        sqliteFile: t.config.databaseUrl ? undefined : `${t.dataDir}/fsm.sqlite`,
        poolSize: 5,
      });
      const app2 = await buildApp({ config: t.config, database: other, clock: () => t.clock.now, deliveries: false });
      await app2.ready();
      try {
        for (let round = 0; round < 6; round++) {
          const start = await codeTokens();
          assert.equal(start.status, 200, JSON.stringify(start.body));
          const form = { grant_type: 'refresh_token', refresh_token: start.body.refresh_token, client_id: clientId };
          const answers = await Promise.all([t.app, app2, t.app, app2].map(async (app) => tokenRequest(app, form)));
          const won = answers.filter((a) => a.status === 200);
          assert.equal(won.length, 1, `round ${round}: ${answers.map((a) => a.status).join(',')}`);
          for (const a of answers.filter((x) => x.status !== 200)) assert.equal(a.body.error, 'invalid_grant');
          // Whoever lost presented a replaced token: the whole grant is ended, the winner's tokens too.
          for (const w of won) {
            assert.equal(await api(w.body.access_token), 401);
            const again = await tokenRequest(t.app, { ...form, refresh_token: w.body.refresh_token });
            assert.equal(again.body.error, 'invalid_grant');
          }
          assert.equal(await api(start.body.access_token), 401);
          const row = await t.database.db
            .selectFrom('oauth_tokens')
            .select(['replaced_at', 'revoked'])
            .where('token_hash', '=', hashToken(start.body.refresh_token))
            .executeTakeFirstOrThrow();
          assert.equal(row.revoked, 1);
        }
      } finally {
        await app2.close();
        await other.close();
      }
    });
  });
}
