import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashToken } from '../src/auth/secrets.js';
import { createModel } from '../src/oauth/grants/model.js';
import {
  authorizeWithInject,
  call,
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  injectBrowser,
  skipUnless,
  tokenRequest,
  type Tenant,
  type TestApp,
} from './helpers.js';

const CB = 'http://127.0.0.1:9/cb';
type Client = { clientId: string; clientSecret: string };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
/** Percent-encodes every character, as RFC 6749 Appendix B allows a client to do. */
const encodeAll = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

for (const dialect of DIALECTS) {
  describe(`revocation (RFC 7009) and introspection (RFC 7662) (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let a: Client;
    let b: Client;
    let browser: ReturnType<typeof injectBrowser>;

    const tokens = async (c: Client, offline = true) => {
      const { code } = await authorizeWithInject(
        browser,
        { client_id: c.clientId, ...(offline ? { access_type: 'offline' } : {}) },
        { login: tenant.login, password: tenant.password },
      );
      const res = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: code!,
        client_id: c.clientId,
        client_secret: c.clientSecret,
      });
      assert.equal(res.status, 200);
      return res.body as { access_token: string; refresh_token?: string };
    };
    const refresh = (c: Client, refreshToken: string) =>
      tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: c.clientId,
        client_secret: c.clientSecret,
      });
    const revoke = (c: Client, form: Record<string, string>) =>
      tokenRequest(t.app, { ...form, client_id: c.clientId, client_secret: c.clientSecret }, {}, '/oauth2/revoke');
    const introspect = (c: Client, form: Record<string, string>, headers: Record<string, string> = {}) =>
      tokenRequest(
        t.app,
        headers.authorization ? form : { ...form, client_id: c.clientId, client_secret: c.clientSecret },
        headers,
        '/oauth2/introspect',
      );
    const api = async (token: string) => (await call(t.app, token, 'GET', '/users')).status;
    const active = async (c: Client, token: string) => (await introspect(c, { token })).body.active as boolean;

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0; // limits have their own tests
      tenant = await createTenant(t);
      a = await createOAuthClient(t.database, {
        redirectUris: [CB],
        permissions: ['users.read', 'jobs.read', 'jobs.write'],
      });
      b = await createOAuthClient(t.database, { redirectUris: [CB] });
      browser = injectBrowser(t.app);
    });
    after(() => t?.close());

    test('introspection of a live token: the RFC 7662 members, with the owner and the permissions granted', async () => {
      const before = Math.floor(t.clock.now / 1000);
      const { access_token, refresh_token } = await tokens(a);
      const res = await introspect(a, { token: access_token });
      assert.equal(res.status, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
      assert.deepEqual(res.body, {
        active: true,
        scope: 'default',
        client_id: a.clientId,
        username: tenant.login,
        sub: String(tenant.adminId),
        exp: res.body.iat + 3600,
        iat: res.body.iat,
        token_type: 'Bearer',
        permissions: ['users.read', 'jobs.read', 'jobs.write'],
      });
      assert.ok(res.body.iat >= before && res.body.iat <= before + 5);
      const r = await introspect(a, { token: refresh_token!, token_type_hint: 'refresh_token' });
      assert.equal(r.body.active, true);
      assert.equal(r.body.token_type, 'refresh_token');
      assert.equal(r.body.exp, r.body.iat + 60 * 24 * 3600);
      // Client authentication by Basic works the same, form-url-decoded (RFC 6749 Appendix B).
      const byBasic = await introspect(
        a,
        { token: access_token },
        { authorization: basic(encodeAll(a.clientId), encodeAll(a.clientSecret)) },
      );
      assert.deepEqual(byBasic.body, res.body);
    });

    test('introspection says only {"active":false} for an unknown, expired, revoked or another client’s token', async () => {
      const { access_token } = await tokens(a, false);
      assert.deepEqual((await introspect(a, { token: 'unknown-token' })).body, { active: false });
      assert.deepEqual(
        (await introspect(b, { token: access_token })).body,
        { active: false },
        'another client’s token',
      );
      assert.equal(await active(a, access_token), true, 'and asking did not harm it');
      t.clock.now += 3600 * 1000;
      try {
        assert.deepEqual((await introspect(a, { token: access_token })).body, { active: false }, 'expired');
      } finally {
        t.clock.now -= 3600 * 1000;
      }
      assert.equal((await revoke(a, { token: access_token })).status, 200);
      assert.deepEqual((await introspect(a, { token: access_token })).body, { active: false }, 'revoked');
    });

    test('revocation answers 200 whether or not the token existed; a missing token is invalid_request', async () => {
      for (const form of [
        { token: 'never-issued' },
        { token: 'never-issued', token_type_hint: 'access_token' },
        { token: 'x', token_type_hint: 'something_else' },
      ] as Record<string, string>[]) {
        const res = await revoke(a, form);
        assert.equal(res.status, 200, JSON.stringify(form));
        assert.equal(res.headers['cache-control'], 'no-store');
      }
      const missing = await revoke(a, {});
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'invalid_request');
      assert.equal((await introspect(a, {})).body.error, 'invalid_request');
    });

    test('revoking an access token ends it and only it; the hint is only a hint', async () => {
      const one = await tokens(a);
      const two = await tokens(a);
      assert.equal(await api(one.access_token), 200);
      // The wrong hint: the server extends its search to the other kind (RFC 7009 §2.1).
      assert.equal((await revoke(a, { token: one.access_token, token_type_hint: 'refresh_token' })).status, 200);
      assert.equal(await api(one.access_token), 401);
      assert.equal(await active(a, one.refresh_token!), true, 'its refresh token lives on');
      assert.equal((await refresh(a, one.refresh_token!)).status, 200);
      assert.equal(await api(two.access_token), 200, 'another grant is untouched');
      // Revoking again is still 200.
      assert.equal((await revoke(a, { token: one.access_token })).status, 200);
    });

    test('revoking a refresh token revokes the access tokens issued with it and from it', async () => {
      const grant = await tokens(a);
      const refreshed = await refresh(a, grant.refresh_token!);
      assert.equal(refreshed.status, 200);
      const other = await tokens(a);
      assert.equal((await revoke(a, { token: grant.refresh_token!, token_type_hint: 'refresh_token' })).status, 200);
      assert.equal(await api(grant.access_token), 401, 'issued with it (same code)');
      assert.equal(await api(refreshed.body.access_token), 401, 'issued from it');
      assert.equal(await active(a, grant.refresh_token!), false);
      const again = await refresh(a, grant.refresh_token!);
      assert.equal(again.status, 400);
      assert.equal(again.body.error, 'invalid_grant');
      assert.equal(await api(other.access_token), 200, 'another grant of the same client and owner is untouched');
      assert.equal((await refresh(a, other.refresh_token!)).status, 200);
    });

    test('a refresh grant racing a revocation: the access token it issues is revoked with its refresh token', async () => {
      const grant = await tokens(a);
      const row = await t.database.db
        .selectFrom('oauth_tokens')
        .select(['id', 'user_id', 'account_id'])
        .where('token_hash', '=', hashToken(grant.refresh_token!))
        .executeTakeFirstOrThrow();
      // The grant's lookup passed before the revocation landed; then it stores its access token.
      assert.equal((await revoke(a, { token: grant.refresh_token! })).status, 200);
      const model = createModel(t.database, () => t.clock.now);
      const late = await model.saveToken(
        { scope: ['users.read'], codeId: null, offline: false, refreshId: row.id },
        { id: a.clientId, grants: [], redirectUris: [] },
        { id: row.user_id, accountId: row.account_id },
      );
      assert.equal(await api(late.accessToken), 401);
      assert.equal(await active(a, late.accessToken), false);
    });

    test('another client’s token is left alone', async () => {
      const mine = await tokens(a);
      assert.equal((await revoke(b, { token: mine.access_token })).status, 200, 'no hint that it exists');
      assert.equal((await revoke(b, { token: mine.refresh_token!, token_type_hint: 'refresh_token' })).status, 200);
      assert.equal(await api(mine.access_token), 200);
      assert.equal((await refresh(a, mine.refresh_token!)).status, 200);
      assert.equal(await active(a, mine.access_token), true);
    });

    test('client authentication exactly as at the token endpoint: 401 + WWW-Authenticate: Basic in both forms, uncertified refused', async () => {
      const { access_token } = await tokens(a, false);
      for (const url of ['/oauth2/revoke', '/oauth2/introspect']) {
        const attempts: [string, Record<string, string>, Record<string, string>][] = [
          ['wrong secret in the body', { token: access_token, client_id: a.clientId, client_secret: 'wrong' }, {}],
          [
            'unknown client in the body',
            { token: access_token, client_id: 'fsm_nobody', client_secret: a.clientSecret },
            {},
          ],
          ['no secret', { token: access_token, client_id: a.clientId }, {}],
          ['no credentials', { token: access_token }, {}],
          ['wrong secret by Basic', { token: access_token }, { authorization: basic(a.clientId, 'wrong') }],
          ['malformed Basic', { token: access_token }, { authorization: 'Basic !!!' }],
        ];
        for (const [what, form, headers] of attempts) {
          const res = await tokenRequest(t.app, form, headers, url);
          assert.equal(res.status, 401, `${url}: ${what}`);
          assert.equal(res.body.error, 'invalid_client', `${url}: ${what}`);
          assert.match(String(res.headers['www-authenticate']), /^Basic /, `${url}: ${what}`);
          assert.equal(res.headers['cache-control'], 'no-store');
        }
        // Credentials in both places, or in the URI, are malformed requests.
        const both = await tokenRequest(
          t.app,
          { token: access_token, client_secret: a.clientSecret },
          { authorization: basic(a.clientId, a.clientSecret) },
          url,
        );
        assert.equal(both.body.error, 'invalid_request', url);
        const inUri = await tokenRequest(
          t.app,
          { client_id: a.clientId, client_secret: a.clientSecret },
          {},
          `${url}?token=${access_token}`,
        );
        assert.equal(inUri.body.error, 'invalid_request', url);
        // A revoked client is unknown; an uncertified one is unauthorized_client.
        const revoked = await createOAuthClient(t.database, { redirectUris: [CB] });
        await t.database.db
          .updateTable('oauth_clients')
          .set({ revoked: 1 })
          .where('client_id', '=', revoked.clientId)
          .execute();
        assert.equal(
          (
            await tokenRequest(
              t.app,
              { token: 'x', client_id: revoked.clientId, client_secret: revoked.clientSecret },
              {},
              url,
            )
          ).status,
          401,
        );
        const uncertified = await createOAuthClient(t.database, { redirectUris: [CB], certified: false });
        const refused = await tokenRequest(
          t.app,
          { token: 'x', client_id: uncertified.clientId, client_secret: uncertified.clientSecret },
          {},
          url,
        );
        assert.equal(refused.status, 400);
        assert.equal(refused.body.error, 'unauthorized_client');
      }
      assert.equal(await api(access_token), 200, 'nothing was revoked by the failed attempts');
    });

    test('revocation by Basic with reserved characters; the token of an owner deleted since is inactive', async () => {
      const { access_token } = await tokens(a, false);
      const res = await tokenRequest(
        t.app,
        { token: access_token },
        { authorization: basic(encodeAll(a.clientId), encodeAll(a.clientSecret)) },
        '/oauth2/revoke',
      );
      assert.equal(res.status, 200);
      assert.equal(await api(access_token), 401);

      const login = `owner-${Date.now()}`;
      const password = 'long enough pass';
      const created = await call(t.app, tenant.token, 'POST', '/users', {
        users: [
          {
            account: { id: tenant.accountId },
            firstName: 'Del',
            lastName: 'Eted',
            mobile: '+447700900124',
            login,
            newPassword: password,
            newPasswordConfirm: password,
          },
        ],
      });
      assert.equal(created.status, 200, created.raw);
      const { code } = await authorizeWithInject(injectBrowser(t.app), { client_id: a.clientId }, { login, password });
      const theirs = (
        await tokenRequest(t.app, {
          grant_type: 'authorization_code',
          code: code!,
          client_id: a.clientId,
          client_secret: a.clientSecret,
        })
      ).body.access_token as string;
      assert.equal((await introspect(a, { token: theirs })).body.username, login);
      assert.equal(
        (await call(t.app, tenant.token, 'PATCH', `/users/${created.body.users[0].id}`, { users: [{ deleted: true }] }))
          .status,
        200,
      );
      assert.deepEqual((await introspect(a, { token: theirs })).body, { active: false });
    });
  });
}
