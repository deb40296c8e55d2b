import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { hashToken, randomToken } from '../src/auth/secrets.js';
import {
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';
import { ownerApproves } from './owner-fetch.js';

const REDIRECT = 'http://127.0.0.1:9/cb';
const insecure = { [oauth.allowInsecureRequests]: true }; // the test server is plain http on loopback

for (const dialect of DIALECTS) {
  describe(`oauth4webapi as the client, from discovery alone (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let issuer: URL;
    let client: oauth.Client;
    // Reserved characters make the library's Basic encoding (RFC 6749 Appendix B) matter.
    const secret = `${randomToken()}-_+:% ~`;

    before(async () => {
      t = await createTestApp(dialect);
      tenant = await createTenant(t);
      const { clientId } = await createOAuthClient(t.database, { redirectUris: [REDIRECT] });
      await t.database.db
        .updateTable('oauth_clients')
        .set({ secret_hash: hashToken(secret) })
        .where('client_id', '=', clientId)
        .execute();
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      // PUBLIC_URL is the origin the client knows the server by: the issuer.
      t.config.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      issuer = new URL(t.config.publicUrl);
      client = { client_id: clientId };
    });
    after(() => t?.close());

    test('discovery, code flow with PKCE and iss, refresh, introspection and revocation', async () => {
      // Only the issuer is configured; every endpoint comes from RFC 8414 metadata.
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
      assert.equal(as.authorization_response_iss_parameter_supported, true);
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
      assert.ok(as.token_endpoint_auth_methods_supported!.includes('client_secret_basic'));

      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        scope: as.scopes_supported![0],
        state,
        access_type: 'offline',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();

      const callback = await ownerApproves(url, { login: tenant.login, password: tenant.password });
      // The metadata promises iss: the library now requires it and checks it against the issuer.
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      );
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      assert.equal(tokens.token_type, 'bearer'); // oauth4webapi lower-cases it
      assert.equal(tokens.expires_in, 3600);
      assert.equal(typeof tokens.refresh_token, 'string');
      const api = async (token: string) =>
        (await fetch(`${issuer.origin}/users`, { headers: { authorization: `Bearer ${token}`, 'x-version': '1.0' } }))
          .status;
      assert.equal(await api(tokens.access_token), 200);

      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(
          as,
          client,
          oauth.ClientSecretPost(secret),
          tokens.refresh_token!,
          insecure,
        ),
      );
      assert.equal(refreshed.expires_in, 3600);
      assert.equal(refreshed.refresh_token, undefined);
      assert.notEqual(refreshed.access_token, tokens.access_token);
      assert.equal(await api(refreshed.access_token), 200);

      const introspect = async (token: string) =>
        oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(secret), token, insecure),
        );
      const info = await introspect(refreshed.access_token);
      assert.equal(info.active, true);
      assert.equal(info.client_id, client.client_id);
      assert.equal(info.username, tenant.login);
      assert.equal(info.sub, String(tenant.adminId));
      assert.equal(info.scope, 'default');
      assert.equal(info.token_type, 'Bearer');

      // Revoking the refresh token ends the grant: both access tokens and the refresh token.
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, oauth.ClientSecretPost(secret), tokens.refresh_token!, {
          additionalParameters: { token_type_hint: 'refresh_token' },
          ...insecure,
        }),
      );
      assert.deepEqual(await introspect(refreshed.access_token), { active: false });
      assert.equal(await api(tokens.access_token), 401);
      assert.equal(await api(refreshed.access_token), 401);
      const dead = await oauth.refreshTokenGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(secret),
        tokens.refresh_token!,
        insecure,
      );
      await assert.rejects(
        oauth.processRefreshTokenResponse(as, client, dead),
        (err: oauth.ResponseBodyError) => err.error === 'invalid_grant',
      );
      // An unknown token is revoked "successfully" too (RFC 7009 §2.2).
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, oauth.ClientSecretBasic(secret), 'never-issued', insecure),
      );

      // The same code a second time: the library sees an OAuth error it can act on.
      const replay = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      );
      await assert.rejects(
        oauth.processAuthorizationCodeResponse(as, client, replay),
        (err: oauth.ResponseBodyError) => err.error === 'invalid_grant',
      );
    });

    test('an error redirect is validated with its iss too (the owner denies)', async () => {
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        scope: 'default',
        state,
      }).toString();
      const callback = await ownerApproves(url, { login: tenant.login, password: tenant.password }, 'deny');
      assert.throws(
        () => oauth.validateAuthResponse(as, client, callback, state),
        (err: oauth.AuthorizationResponseError) => err.error === 'access_denied',
      );
      // Without iss, or with another issuer's, the library refuses the response as a possible mix-up.
      const forged = new URL(callback);
      forged.searchParams.set('iss', 'https://other-issuer.example');
      assert.throws(
        () => oauth.validateAuthResponse(as, client, forged, state),
        (err: Error) => !(err instanceof oauth.AuthorizationResponseError),
      );
    });
  });
}
