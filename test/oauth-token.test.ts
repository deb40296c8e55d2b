import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hashToken } from '../src/auth/secrets.js';
import { revokeClient } from '../src/oauth/grants/clients.js';
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
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
/** Percent-encodes every character, as RFC 6749 Appendix B allows a client to do. */
const encodeAll = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

function assertTokenHeaders(headers: Record<string, unknown>) {
  assert.equal(headers['cache-control'], 'no-store');
  assert.equal(headers.pragma, 'no-cache');
  assert.equal(headers['content-type'], 'application/json;charset=UTF-8');
  assert.equal(headers['x-version'], '1.0');
}

function assertError(
  res: { status: number; headers: Record<string, unknown>; body: Record<string, unknown> },
  status: number,
  error: string,
) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error, error);
  assert.equal(typeof res.body.error_description, 'string');
  assertTokenHeaders(res.headers);
}

for (const dialect of DIALECTS) {
  describe(`token endpoint (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let client: { clientId: string; clientSecret: string };
    let browser: ReturnType<typeof injectBrowser>;

    /** A fresh code for the tenant's owner; the browser signs in once, then only consents. */
    const getCode = async (params: Record<string, string> = {}, forClient = client.clientId) =>
      (
        await authorizeWithInject(
          browser,
          { client_id: forClient, ...params },
          { login: tenant.login, password: tenant.password },
        )
      ).code!;
    const redeem = (code: string, extra: Record<string, string> = {}, c = client) =>
      tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        client_id: c.clientId,
        client_secret: c.clientSecret,
        ...extra,
      });
    const usersStatus = async (token: string) => (await call(t.app, token, 'GET', '/users')).status;

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0; // these suites send far more than a browser would; limits have their own tests
      tenant = await createTenant(t);
      client = await createOAuthClient(t.database, { redirectUris: [CB] });
      browser = injectBrowser(t.app);
    });
    after(() => t?.close());

    test('code grant with credentials in the body: 3600 s bearer token, no refresh token unless offline', async () => {
      const res = await redeem(await getCode());
      assert.equal(res.status, 200);
      assertTokenHeaders(res.headers);
      assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'token_type']);
      assert.equal(res.body.token_type, 'Bearer');
      assert.equal(res.body.expires_in, 3600); // the library alone answers 3599
      assert.match(res.body.access_token, /^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/);
      assert.equal(await usersStatus(res.body.access_token), 200);
      const stored = await t.database.db
        .selectFrom('oauth_tokens')
        .select('id')
        .where('token_hash', '=', hashToken(res.body.access_token))
        .execute();
      assert.equal(stored.length, 1);
    });

    test('Basic credentials are form-url-decoded (RFC 6749 Appendix B); a failed Basic gets 401 + WWW-Authenticate', async () => {
      const plain = await tokenRequest(
        t.app,
        { grant_type: 'authorization_code', code: await getCode() },
        { authorization: basic(client.clientId, client.clientSecret) },
      );
      assert.equal(plain.status, 200);
      const encoded = await tokenRequest(
        t.app,
        { grant_type: 'authorization_code', code: await getCode() },
        { authorization: basic(encodeAll(client.clientId), encodeAll(client.clientSecret)) },
      );
      assert.equal(encoded.status, 200, JSON.stringify(encoded.body));
      const code = await getCode();
      for (const auth of [
        basic(client.clientId, 'wrong'),
        basic('unknown-client', client.clientSecret),
        'Basic !!!',
        `Basic ${Buffer.from('no-colon').toString('base64')}`,
        basic('%zz', 'x'),
      ]) {
        const res = await tokenRequest(t.app, { grant_type: 'authorization_code', code }, { authorization: auth });
        assertError(res, 401, 'invalid_client');
        assert.match(String(res.headers['www-authenticate']), /^Basic /);
      }
      // Wrong secret and unknown client are indistinguishable in the body too.
      const wrong = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        client_id: client.clientId,
        client_secret: 'nope',
      });
      const unknown = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        client_id: 'nope',
        client_secret: 'nope',
      });
      assertError(wrong, 401, 'invalid_client');
      assert.deepEqual(wrong.body, unknown.body);
      // The code was not consumed by the failed attempts.
      assert.equal((await redeem(code)).status, 200);
    });

    test('malformed requests: both credential forms, query-string credentials, repeats, wrong content type, unknown grant', async () => {
      const code = await getCode();
      const both = await tokenRequest(
        t.app,
        { grant_type: 'authorization_code', code, client_secret: client.clientSecret },
        { authorization: basic(client.clientId, client.clientSecret) },
      );
      assertError(both, 400, 'invalid_request');
      const inQuery = await tokenRequest(
        t.app,
        { grant_type: 'authorization_code', code },
        {},
        `/oauth2/token?client_id=${client.clientId}&client_secret=${client.clientSecret}`,
      );
      assertError(inQuery, 400, 'invalid_request');
      const repeated = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: [code, code],
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      assertError(repeated, 400, 'invalid_request');
      const json = await t.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ grant_type: 'authorization_code', code }),
      });
      assertError(
        { status: json.statusCode, headers: json.headers, body: JSON.parse(json.body) },
        400,
        'invalid_request',
      );
      const badJson = await t.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        headers: { 'content-type': 'application/json' },
        payload: '{',
      });
      assertError(
        { status: badJson.statusCode, headers: badJson.headers, body: JSON.parse(badJson.body) },
        400,
        'invalid_request',
      );
      const password = await tokenRequest(t.app, {
        grant_type: 'password',
        username: tenant.login,
        password: tenant.password,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      assertError(password, 400, 'unsupported_grant_type');
      const noVersion = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: 'x'.repeat(43),
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      assertError(noVersion, 400, 'invalid_grant'); // no X-Version needed on /oauth2
      assert.equal((await redeem(code)).status, 200);
    });

    test('an uncertified client is refused with unauthorized_client; a revoked one is unknown', async () => {
      // /oauth2/code refuses an uncertified client before any code exists (oauth-discovery.test.ts);
      // here the certification is withdrawn between the code and its redemption.
      const uncertified = await createOAuthClient(t.database, { redirectUris: [CB] });
      const code = await getCode({}, uncertified.clientId);
      await t.database.db
        .updateTable('oauth_clients')
        .set({ certified: 0 })
        .where('client_id', '=', uncertified.clientId)
        .execute();
      assertError(await redeem(code, {}, uncertified), 400, 'unauthorized_client');
      const revoked = await createOAuthClient(t.database, { redirectUris: [CB] });
      const code2 = await getCode({}, revoked.clientId);
      await revokeClient(t.database, revoked.clientId);
      assertError(await redeem(code2, {}, revoked), 401, 'invalid_client');
    });

    test('codes: single use; a replay is invalid_grant and revokes every token issued from the code', async () => {
      const code = await getCode({ access_type: 'offline' });
      const first = await redeem(code);
      assert.equal(first.status, 200);
      assert.equal(typeof first.body.refresh_token, 'string');
      const refreshed = await tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      assert.equal(refreshed.status, 200);
      assertError(await redeem(code), 400, 'invalid_grant');
      assert.equal(await usersStatus(first.body.access_token), 401);
      assert.equal(await usersStatus(refreshed.body.access_token), 401);
      const again = await tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      assertError(again, 400, 'invalid_grant');
    });

    test('two concurrent redemptions of one code: exactly one wins', async () => {
      const code = await getCode();
      const results = await Promise.all([redeem(code), redeem(code), redeem(code)]);
      assert.equal(results.filter((r) => r.status === 200).length, 1, JSON.stringify(results.map((r) => r.body)));
      for (const r of results.filter((x) => x.status !== 200)) assertError(r, 400, 'invalid_grant');
      // The losers were replays: the winner's token is revoked as well.
      assert.equal(await usersStatus(results.find((r) => r.status === 200)!.body.access_token), 401);
    });

    test('codes expire after 60 s (app clock)', async () => {
      const code = await getCode();
      t.clock.now += 61_000;
      assertError(await redeem(code), 400, 'invalid_grant');
    });

    test('redirect_uri: must repeat the one sent; may be omitted or equal the single registered one when none was sent', async () => {
      const sent = await getCode({ redirect_uri: CB });
      assertError(await redeem(sent), 400, 'invalid_grant');
      assert.equal((await redeem(await getCode({ redirect_uri: CB }), { redirect_uri: CB })).status, 200);
      const other = await getCode({ redirect_uri: CB });
      assertError(await redeem(other, { redirect_uri: 'http://127.0.0.1:9/other' }), 400, 'invalid_grant');
      assert.equal((await redeem(await getCode(), { redirect_uri: CB })).status, 200);
      assertError(await redeem(await getCode(), { redirect_uri: 'http://127.0.0.1:9/other' }), 400, 'invalid_grant');
      const multi = await createOAuthClient(t.database, { redirectUris: [CB, 'https://app.example/cb'] });
      const m = await getCode({ redirect_uri: 'https://app.example/cb' }, multi.clientId);
      assertError(await redeem(m, {}, multi), 400, 'invalid_grant');
    });

    test('PKCE S256 is enforced when a challenge was sent; the secret is still required', async () => {
      const verifier = crypto.randomBytes(32).toString('base64url');
      const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
      const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
      assertError(await redeem(await getCode(pkce)), 400, 'invalid_grant');
      assertError(
        await redeem(await getCode(pkce), { code_verifier: crypto.randomBytes(32).toString('base64url') }),
        400,
        'invalid_grant',
      );
      assertError(await redeem(await getCode(), { code_verifier: verifier }), 400, 'invalid_grant');
      // A confidential client must authenticate even with a verifier (the library lets it skip the secret).
      const noSecret = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: await getCode(pkce),
        client_id: client.clientId,
        code_verifier: verifier,
      });
      assertError(noSecret, 401, 'invalid_client');
      assert.equal((await redeem(await getCode(pkce), { code_verifier: verifier })).status, 200);
    });

    test('refresh: new access token only, same permissions; 60-day idle expiry slides on use', async () => {
      const first = await redeem(await getCode({ access_type: 'offline' }));
      const refresh = (rt = first.body.refresh_token) =>
        tokenRequest(
          t.app,
          { grant_type: 'refresh_token', refresh_token: rt },
          { authorization: basic(client.clientId, client.clientSecret) },
        );
      const r1 = await refresh();
      assert.equal(r1.status, 200);
      assertTokenHeaders(r1.headers);
      assert.deepEqual(Object.keys(r1.body).sort(), ['access_token', 'expires_in', 'token_type']);
      assert.equal(r1.body.expires_in, 3600);
      assert.equal(await usersStatus(r1.body.access_token), 200);
      assertError(
        await tokenRequest(
          t.app,
          { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, scope: 'users.read' },
          { authorization: basic(client.clientId, client.clientSecret) },
        ),
        400,
        'invalid_scope',
      );
      const other = await createOAuthClient(t.database, { redirectUris: [CB] });
      assertError(
        await tokenRequest(t.app, {
          grant_type: 'refresh_token',
          refresh_token: first.body.refresh_token,
          client_id: other.clientId,
          client_secret: other.clientSecret,
        }),
        400,
        'invalid_grant',
      );
      const day = 24 * 3600 * 1000;
      t.clock.now += 59 * day;
      assert.equal((await refresh()).status, 200);
      t.clock.now += 59 * day; // 118 days after issue, 59 after last use
      assert.equal((await refresh()).status, 200);
      t.clock.now += 60 * day + 1;
      assertError(await refresh(), 400, 'invalid_grant');
    });

    test('refresh is refused once the user is deleted or the client revoked', async () => {
      const own = await createOAuthClient(t.database, { redirectUris: [CB] });
      const a = await redeem(await getCode({ access_type: 'offline' }, own.clientId), {}, own);
      const b = await redeem(await getCode({ access_type: 'offline' }), {});
      await revokeClient(t.database, own.clientId);
      assertError(
        await tokenRequest(t.app, {
          grant_type: 'refresh_token',
          refresh_token: a.body.refresh_token,
          client_id: own.clientId,
          client_secret: own.clientSecret,
        }),
        401,
        'invalid_client',
      );
      await t.database.db.updateTable('users').set({ deleted: 1 }).where('id', '=', tenant.adminId).execute();
      try {
        assertError(
          await tokenRequest(t.app, {
            grant_type: 'refresh_token',
            refresh_token: b.body.refresh_token,
            client_id: client.clientId,
            client_secret: client.clientSecret,
          }),
          400,
          'invalid_grant',
        );
      } finally {
        await t.database.db.updateTable('users').set({ deleted: 0 }).where('id', '=', tenant.adminId).execute();
      }
    });
  });
}
