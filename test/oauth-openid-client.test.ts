import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
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

const REDIRECT = 'http://127.0.0.1:9/callback';

for (const dialect of DIALECTS) {
  describe(
    `openid-client (plain OAuth 2.0) as the client, from discovery alone (${dialect})`,
    { skip: skipUnless(dialect) },
    () => {
      let t: TestApp;
      let tenant: Tenant;
      let registered: { clientId: string; clientSecret: string };

      before(async () => {
        t = await createTestApp(dialect);
        tenant = await createTenant(t);
        registered = await createOAuthClient(t.database, { redirectUris: [REDIRECT], permissions: ['users.read'] });
        await t.app.listen({ host: '127.0.0.1', port: 0 });
        t.config.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      });
      after(() => t?.close());

      for (const auth of ['client_secret_basic', 'client_secret_post'] as const) {
        test(`discovery, code flow with PKCE, state and iss, refresh, introspection, revocation (${auth})`, async () => {
          const clientAuth =
            auth === 'client_secret_basic'
              ? oidc.ClientSecretBasic(registered.clientSecret)
              : oidc.ClientSecretPost(registered.clientSecret);
          // RFC 8414 discovery ('oauth2'), http allowed on loopback for the test.
          const config = await oidc.discovery(new URL(t.config.publicUrl), registered.clientId, undefined, clientAuth, {
            algorithm: 'oauth2',
            execute: [oidc.allowInsecureRequests],
          });
          assert.equal(config.serverMetadata().issuer, t.config.publicUrl);

          const verifier = oidc.randomPKCECodeVerifier();
          const state = oidc.randomState();
          const url = oidc.buildAuthorizationUrl(config, {
            redirect_uri: REDIRECT,
            scope: 'default',
            state,
            access_type: 'offline',
            code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
            code_challenge_method: 'S256',
          });
          assert.equal(url.origin + url.pathname, `${t.config.publicUrl}/oauth2/code`);
          const callback = await ownerApproves(url, { login: tenant.login, password: tenant.password });
          assert.equal(callback.searchParams.get('iss'), t.config.publicUrl);

          const tokens = await oidc.authorizationCodeGrant(config, callback, {
            pkceCodeVerifier: verifier,
            expectedState: state,
          });
          assert.equal(tokens.expires_in, 3600);
          assert.equal(tokens.id_token, undefined, 'plain OAuth 2.0: no ID token');
          assert.ok(tokens.refresh_token);
          const api = async (token: string) =>
            (
              await fetch(`${t.config.publicUrl}/users`, {
                headers: { authorization: `Bearer ${token}`, 'x-version': '1.0' },
              })
            ).status;
          assert.equal(await api(tokens.access_token), 200);

          const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
          assert.equal(
            refreshed.refresh_token,
            undefined,
            'no rotation: the refresh grant returns an access token only',
          );
          assert.equal(await api(refreshed.access_token), 200);

          const info = await oidc.tokenIntrospection(config, refreshed.access_token);
          assert.equal(info.active, true);
          assert.equal(info.client_id, registered.clientId);
          assert.equal(info.username, tenant.login);
          assert.deepEqual(info.permissions, ['users.read']);

          await oidc.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
          assert.deepEqual(await oidc.tokenIntrospection(config, refreshed.access_token), { active: false });
          assert.equal(await api(refreshed.access_token), 401);
          await assert.rejects(
            oidc.refreshTokenGrant(config, tokens.refresh_token!),
            (err: { error?: string }) => err.error === 'invalid_grant',
          );
        });
      }

      test('a wrong secret is refused at every client endpoint with 401 and a Basic challenge', async () => {
        const config = await oidc.discovery(
          new URL(t.config.publicUrl),
          registered.clientId,
          undefined,
          oidc.ClientSecretBasic('wrong'),
          {
            algorithm: 'oauth2',
            execute: [oidc.allowInsecureRequests],
          },
        );
        for (const call of [
          () => oidc.tokenIntrospection(config, 'x'),
          () => oidc.tokenRevocation(config, 'x'),
          () => oidc.refreshTokenGrant(config, 'x'),
        ]) {
          // The library surfaces the 401's `WWW-Authenticate: Basic` challenge (RFC 6749 §5.2).
          await assert.rejects(
            call(),
            (err: { status?: number; cause?: { scheme?: string }[] }) =>
              err.status === 401 && err.cause?.[0]?.scheme === 'basic',
          );
        }
      });
    },
  );
}
