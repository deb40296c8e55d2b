import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { hashToken, randomToken } from '../src/auth/secrets.js';
import { createOAuthClient, createTenant, createTestApp, DIALECTS, formAction, inputValue, skipUnless, type Tenant, type TestApp } from './helpers.js';

const REDIRECT = 'http://127.0.0.1:9/cb';
const insecure = { [oauth.allowInsecureRequests]: true }; // the test server is plain http on loopback

/** The owner's part with plain fetch: a cookie jar, the login form and the consent form. */
async function ownerApproves(authUrl: URL, owner: { login: string; password: string }): Promise<URL> {
  const jar = new Map<string, string>();
  const go = async (url: string, form?: Record<string, string>) => {
    const res = await fetch(new URL(url, authUrl), {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form) : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: res.status, location: res.headers.get('location'), body: await res.text() };
  };
  const login = await go(authUrl.toString());
  const signedIn = await go(formAction(login.body), { csrf: inputValue(login.body, 'csrf'), ...owner });
  assert.equal(signedIn.status, 303);
  const consent = await go(signedIn.location!);
  const answer = await go(formAction(consent.body), { csrf: inputValue(consent.body, 'csrf'), decision: 'allow' });
  assert.equal(answer.status, 302);
  return new URL(answer.location!);
}

for (const dialect of DIALECTS) {
  describe(`oauth4webapi as the client (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    let as: oauth.AuthorizationServer;
    let client: oauth.Client;
    // Reserved characters make the library's Basic encoding (RFC 6749 Appendix B) matter.
    const secret = `${randomToken()}-_+:% ~`;

    before(async () => {
      t = await createTestApp(dialect);
      tenant = await createTenant(t);
      const { clientId } = await createOAuthClient(t.database, { redirectUris: [REDIRECT] });
      await t.database.db.updateTable('oauth_clients').set({ secret_hash: hashToken(secret) }).where('client_id', '=', clientId).execute();
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      as = { issuer: base, authorization_endpoint: `${base}/oauth2/code`, token_endpoint: `${base}/oauth2/token` };
      client = { client_id: clientId };
    });
    after(() => t?.close());

    test('code flow with PKCE and client_secret_basic, then the refresh grant with client_secret_post', async () => {
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'default', state, access_type: 'offline',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      }).toString();

      const callback = await ownerApproves(url, { login: tenant.login, password: tenant.password });
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(secret), params, REDIRECT, verifier, insecure);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      assert.equal(tokens.token_type, 'bearer'); // oauth4webapi lower-cases it
      assert.equal(tokens.expires_in, 3600);
      assert.equal(typeof tokens.refresh_token, 'string');

      const users = await fetch(`${base}/users`, { headers: { authorization: `Bearer ${tokens.access_token}`, 'x-version': '1.0' } });
      assert.equal(users.status, 200);

      const refreshed = await oauth.processRefreshTokenResponse(as, client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretPost(secret), tokens.refresh_token!, insecure));
      assert.equal(refreshed.expires_in, 3600);
      assert.equal(refreshed.refresh_token, undefined);
      assert.notEqual(refreshed.access_token, tokens.access_token);
      const again = await fetch(`${base}/users`, { headers: { authorization: `Bearer ${refreshed.access_token}`, 'x-version': '1.0' } });
      assert.equal(again.status, 200);

      // The same code a second time: the library sees an OAuth error it can act on.
      const replay = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(secret), params, REDIRECT, verifier, insecure);
      await assert.rejects(oauth.processAuthorizationCodeResponse(as, client, replay), (err: oauth.ResponseBodyError) => err.error === 'invalid_grant');
    });
  });
}
