/**
 * The OAuth attack suite: each test is one attack (or a family of variants) on the authorization
 * server, named after the attack. Attacks already proved exactly by oauth-code, oauth-token,
 * rate-limit and tenant-isolation tests are not repeated here; docs/reliability.md (## OAuth
 * attacks) lists every attack with the test that proves it.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, mock, test } from 'node:test';
import { hashToken } from '../src/auth/secrets.js';
import { revokeClient } from '../src/oauth/grants/clients.js';
import { WINDOW_MS } from '../src/http/rate-limit/index.js';
import {
  authorizeWithInject,
  call,
  codeUrl,
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  formAction,
  formEncode,
  injectBrowser,
  inputValue,
  newUser,
  skipUnless,
  tokenRequest,
  type Tenant,
  type TestApp,
} from './helpers.js';

const CB = 'http://127.0.0.1:9/cb';
const GOOD = 'https://good.example/callback';
const base = { response_type: 'code', scope: 'default' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const pkcePair = () => {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
};

type Client = { clientId: string; clientSecret: string };
type Browser = ReturnType<typeof injectBrowser>;
type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/** An unusable authorization request: an HTML error page, 400, never a redirect. */
function assertErrorPage(res: Res, what = '') {
  assert.equal(res.statusCode, 400, what);
  assert.equal(res.headers.location, undefined, what);
  assert.match(String(res.headers['content-type']), /^text\/html;charset=utf-8/, what);
}

/** Clickjacking and leak defences every page carries. */
function assertUnframeable(res: Res, what: string) {
  assert.match(String(res.headers['content-type']), /^text\/html;charset=utf-8/, what);
  assert.equal(res.headers['x-frame-options'], 'DENY', what);
  assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, what);
  assert.equal(res.headers['referrer-policy'], 'no-referrer', what);
  assert.equal(res.headers['cache-control'], 'no-store', what);
  assert.equal(res.headers['x-content-type-options'], 'nosniff', what);
}

function assertTokenError(
  res: { status: number; body: Record<string, unknown> },
  status: number,
  error: string,
  what = '',
) {
  assert.equal(res.status, status, `${what} ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error, error, what);
}

/**
 * A request over a real socket, with the request target written as given: an absolute-form target
 * (`POST http://host/path`, RFC 9112 §3.2.2) is something inject cannot send.
 */
function rawHttp(port: number, method: string, target: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: target, headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

for (const dialect of DIALECTS) {
  describe(`OAuth attacks (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    let client: Client;
    /** Tenant A's Administrator, signed in once; codes are then only a consent away. */
    let owner: Browser;
    let port: number;
    const ownerA = () => ({ login: a.login, password: a.password });

    const getCode = async (
      params: Record<string, string> = {},
      forClient = client.clientId,
      browser = owner,
      who = ownerA(),
    ) => {
      const r = await authorizeWithInject(browser, { client_id: forClient, ...params }, who);
      assert.ok(r.code, `no code: ${r.location}`);
      return r.code;
    };
    const redeem = (code: string, extra: Record<string, string> = {}, c: Client = client) =>
      tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        client_id: c.clientId,
        client_secret: c.clientSecret,
        ...extra,
      });
    const refresh = (refreshToken: string, c: Client = client) =>
      tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: c.clientId,
        client_secret: c.clientSecret,
      });
    const apiStatus = async (token: string) => (await call(t.app, token, 'GET', '/users')).status;
    const codeCount = async () => (await t.database.db.selectFrom('oauth_codes').select('id').execute()).length;
    /** A fresh Administrator token of A (tests move the clock past the first one's hour). */
    const adminA = () => a.tokenFor(a.adminId);

    /** The consent page of `url` in the owner's browser, signing in again if the clock ended the session. */
    /** The consent page for `url` (prompt=consent: asked even when the owner's consent is remembered). */
    async function ownerConsent(url: string) {
      if (!url.includes('prompt=')) url += '&prompt=consent';
      let page = await owner.request('GET', url);
      if (page.body.includes('name="password"')) {
        const res = await owner.request('POST', formAction(page.body), {
          csrf: inputValue(page.body, 'csrf'),
          ...ownerA(),
        });
        assert.equal(res.statusCode, 303);
        page = await owner.request('GET', res.headers.location as string);
      }
      assert.match(page.body, /name="decision"/);
      return page;
    }

    /** A user of tenant A who can sign in, created through the API. */
    async function userWithLogin(role: keyof Tenant['roleIds'] = 'employee') {
      const login = `user-${crypto.randomBytes(4).toString('hex')}`;
      const password = 'a long enough password';
      const res = await call(t.app, await adminA(), 'POST', '/users', {
        users: [
          newUser(a.accountId, {
            login,
            newPassword: password,
            newPasswordConfirm: password,
            role: { id: a.roleIds[role] },
          }),
        ],
      });
      assert.equal(res.status, 200, res.raw);
      return { id: res.body.users[0].id as number, login, password };
    }

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0; // the rate-limit attacks set their own limit
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
      client = await createOAuthClient(t.database, { redirectUris: [CB] });
      owner = injectBrowser(t.app);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => t?.close());

    // ── Authorization codes ─────────────────────────────────────────────────────────────────

    test('code replay after expiry and by another client still revokes the tokens issued from it', async () => {
      const code = await getCode({ access_type: 'offline' });
      const first = await redeem(code);
      assert.equal(first.status, 200);
      const other = await createOAuthClient(t.database, { redirectUris: [CB] });
      // Another client (with its own valid credentials) replays the stolen code: refused, and the
      // replay still revokes what the code gave, access and refresh.
      assertTokenError(await redeem(code, {}, other), 400, 'invalid_grant');
      assert.equal(await apiStatus(first.body.access_token), 401);
      assertTokenError(await refresh(first.body.refresh_token), 400, 'invalid_grant');

      // A replay long after the code expired revokes too (the refreshed access token included).
      const code2 = await getCode({ access_type: 'offline' });
      const second = await redeem(code2);
      const refreshed = await refresh(second.body.refresh_token);
      assert.equal(refreshed.status, 200);
      t.clock.now += 10 * 60_000;
      assertTokenError(await redeem(code2), 400, 'invalid_grant');
      assert.equal(await apiStatus(second.body.access_token), 401);
      assert.equal(await apiStatus(refreshed.body.access_token), 401);
      assertTokenError(await refresh(second.body.refresh_token), 400, 'invalid_grant');
    });

    test('concurrent redemptions of one offline code: exactly one 200, and its access and refresh tokens end up revoked', async () => {
      const code = await getCode({ access_type: 'offline' });
      const results = await Promise.all([redeem(code), redeem(code), redeem(code), redeem(code)]);
      const winners = results.filter((r) => r.status === 200);
      assert.equal(winners.length, 1, JSON.stringify(results.map((r) => r.body)));
      for (const r of results.filter((x) => x.status !== 200)) assertTokenError(r, 400, 'invalid_grant');
      // The losers are replays: what the winner got is revoked, whichever order the database saw.
      assert.equal(typeof winners[0].body.refresh_token, 'string');
      assert.equal(await apiStatus(winners[0].body.access_token), 401);
      assertTokenError(await refresh(winners[0].body.refresh_token), 400, 'invalid_grant');
      const live = await t.database.db
        .selectFrom('oauth_tokens as k')
        .innerJoin('oauth_codes as c', 'c.id', 'k.code_id')
        .select('k.id')
        .where('c.code_hash', '=', hashToken(code))
        .where('k.revoked', '=', 0)
        .execute();
      assert.equal(live.length, 0);
    });

    test('code of client X redeemed by client Y: invalid_grant, and the code is not spent', async () => {
      const y = await createOAuthClient(t.database, { redirectUris: [CB] });
      const code = await getCode();
      assertTokenError(await redeem(code, {}, y), 400, 'invalid_grant', 'Y with its own credentials');
      // Y claiming to be X with Y's secret is just a wrong secret.
      assertTokenError(
        await redeem(code, {}, { clientId: client.clientId, clientSecret: y.clientSecret }),
        401,
        'invalid_client',
        'X id, Y secret',
      );
      assertTokenError(
        await tokenRequest(
          t.app,
          { grant_type: 'authorization_code', code },
          { authorization: basic(y.clientId, y.clientSecret) },
        ),
        400,
        'invalid_grant',
        'Y by Basic',
      );
      // X still redeems its code, and the token belongs to X.
      const res = await redeem(code);
      assert.equal(res.status, 200);
      const row = await t.database.db
        .selectFrom('oauth_tokens')
        .select('client_id')
        .where('token_hash', '=', hashToken(res.body.access_token))
        .executeTakeFirstOrThrow();
      assert.equal(row.client_id, client.clientId);
    });

    test('code, access token and refresh token are not interchangeable', async () => {
      const code = await getCode({ access_type: 'offline' });
      const tokens = await redeem(code);
      assert.equal(tokens.status, 200);
      const { access_token: access, refresh_token: rt } = tokens.body as {
        access_token: string;
        refresh_token: string;
      };
      // A refresh token (or a code) as a bearer token.
      const asBearer = await call(t.app, rt, 'GET', '/users');
      assert.equal(asBearer.status, 401);
      assert.match(String(asBearer.headers['www-authenticate']), /error="invalid_token"/);
      assert.equal(await apiStatus(code), 401);
      // An access token (or a code) as a refresh token, an access or refresh token as a code.
      assertTokenError(await refresh(access), 400, 'invalid_grant', 'access as refresh');
      assertTokenError(await refresh(code), 400, 'invalid_grant', 'code as refresh');
      assertTokenError(await redeem(access), 400, 'invalid_grant', 'access as code');
      assertTokenError(await redeem(rt), 400, 'invalid_grant', 'refresh as code');
      // None of the attempts revoked anything: they were not replays of this code.
      assert.equal(await apiStatus(access), 200);
      assert.equal((await refresh(rt)).status, 200);
    });

    test('expiry boundaries on the app clock: a code at 59 s and 60 s, an access token at 3599 s and 3600 s', async () => {
      const fresh = await getCode();
      t.clock.now += 59_000;
      assert.equal((await redeem(fresh)).status, 200);
      const stale = await getCode();
      t.clock.now += 60_000;
      assertTokenError(await redeem(stale), 400, 'invalid_grant');

      const tokens = await redeem(await getCode({ access_type: 'offline' }));
      t.clock.now += 3599_000;
      assert.equal(await apiStatus(tokens.body.access_token), 200);
      t.clock.now += 1000;
      const expired = await call(t.app, tokens.body.access_token, 'GET', '/users');
      assert.equal(expired.status, 401);
      assert.match(String(expired.headers['www-authenticate']), /error="invalid_token"/);
      // The refresh token outlives it and gives a working access token.
      const renewed = await refresh(tokens.body.refresh_token);
      assert.equal(renewed.status, 200);
      assert.equal(await apiStatus(renewed.body.access_token), 200);
    });

    // ── redirect_uri ────────────────────────────────────────────────────────────────────────

    test('redirect_uri variations at /oauth2/code get an error page, never a redirect, also on the forms’ POSTs', async () => {
      const rc = await createOAuthClient(t.database, { redirectUris: [GOOD, CB] });
      const variants = [
        `${GOOD}/`,
        `${GOOD}?x=1`,
        `${GOOD}?`,
        'https://GOOD.example/callback',
        'https://good.example/Callback',
        'HTTPS://good.example/callback',
        'https://evil.example/callback',
        'https://good.example.evil.example/callback',
        'https://good.example:8443/callback',
        'https://good.example:443/callback',
        'https://good.example@evil.example/callback',
        'https://good.example%40evil.example/callback',
        'https://evil.example\\@good.example/callback',
        'https://evil.example#@good.example/callback',
        'http://good.example/callback',
        `${GOOD}#frag`,
        `${GOOD}#`,
        'https://good.example/%63allback',
        'https://good.example/callback%2F..%2Fevil',
        'https://good.example/callback/../evil',
        'https://good.example/callback/..',
        'https://good.example/callbackevil',
        ` ${GOOD}`,
        `${GOOD} `,
        `${GOOD}\t`,
        `${GOOD}%00`,
        '//good.example/callback',
        '/callback',
        'good.example/callback',
        'javascript:alert(1)//https://good.example/callback',
        'data:text/html,<script>alert(1)</script>',
        '',
        'http://127.0.0.1:9/cb/../cb',
        'http://localhost:9/cb',
        'http://127.0.0.1:10/cb',
        'http://127.0.0.1/cb',
        'http://[::1]:9/cb',
      ];
      await ownerConsent(codeUrl({ ...base, client_id: client.clientId }));
      const codesBefore = await codeCount();
      for (const redirect_uri of variants) {
        assertErrorPage(
          await t.app.inject(codeUrl({ ...base, client_id: rc.clientId, redirect_uri, state: 's' })),
          JSON.stringify(redirect_uri),
        );
        // The same with a signed-in owner (who would otherwise go straight to consent).
        assertErrorPage(
          await owner.request('GET', codeUrl({ ...base, client_id: rc.clientId, redirect_uri })),
          `signed in ${JSON.stringify(redirect_uri)}`,
        );
      }
      // Omitted with several registered, and a repeated parameter (one good, one evil), are pages too.
      assertErrorPage(await t.app.inject(codeUrl({ ...base, client_id: rc.clientId })), 'omitted');
      assertErrorPage(
        await t.app.inject(
          `${codeUrl({ ...base, client_id: rc.clientId, redirect_uri: GOOD })}&redirect_uri=${encodeURIComponent('https://evil.example/')}`,
        ),
        'repeated',
      );
      assertErrorPage(
        await t.app.inject(
          `${codeUrl({ ...base, client_id: rc.clientId, redirect_uri: 'https://evil.example/' })}&redirect_uri=${encodeURIComponent(GOOD)}`,
        ),
        'repeated, evil first',
      );

      // A genuine consent form whose action is edited to an evil redirect_uri: the POST re-checks it.
      const consent = await ownerConsent(codeUrl({ ...base, client_id: rc.clientId, redirect_uri: GOOD, state: 's' }));
      const action = new URL(formAction(consent.body), 'http://x');
      for (const evil of ['https://evil.example/callback', `${GOOD}/`, 'https://good.example@evil.example/callback']) {
        action.searchParams.set('redirect_uri', evil);
        const forged = await owner.request('POST', action.pathname + action.search, {
          csrf: inputValue(consent.body, 'csrf'),
          decision: 'allow',
        });
        assertErrorPage(forged, `consent POST ${evil}`);
      }
      // Likewise the login form, before any password is checked.
      const fresh = injectBrowser(t.app);
      const login = await fresh.request('GET', codeUrl({ ...base, client_id: rc.clientId, redirect_uri: GOOD }));
      const loginAction = new URL(formAction(login.body), 'http://x');
      loginAction.searchParams.set('redirect_uri', 'https://evil.example/callback');
      const forgedLogin = await fresh.request('POST', loginAction.pathname + loginAction.search, {
        csrf: inputValue(login.body, 'csrf'),
        ...ownerA(),
      });
      assertErrorPage(forgedLogin, 'login POST');
      assert.equal(fresh.jar.get('fsm_session'), undefined);
      assert.equal(await codeCount(), codesBefore, 'no code was issued');
    });

    test('redirect_uri near-misses at the token endpoint are invalid_grant and spend the code', async () => {
      for (const sent of [
        `${CB}/`,
        'HTTP://127.0.0.1:9/cb',
        `${CB}?`,
        `${CB}#`,
        'http://127.0.0.1:9/CB',
        'http://localhost:9/cb',
        '',
      ]) {
        const code = await getCode({ redirect_uri: CB });
        assertTokenError(await redeem(code, { redirect_uri: sent }), 400, 'invalid_grant', JSON.stringify(sent));
        // The failed attempt consumed the code: the right redirect_uri no longer helps.
        if (sent === `${CB}/`)
          assertTokenError(await redeem(code, { redirect_uri: CB }), 400, 'invalid_grant', 'after a mismatch');
      }
      // No redirect_uri in the authorization request: only CB itself or nothing.
      assertTokenError(
        await redeem(await getCode(), { redirect_uri: `${CB}/` }),
        400,
        'invalid_grant',
        'unsent, near miss',
      );
    });

    // ── PKCE ────────────────────────────────────────────────────────────────────────────────

    test('PKCE downgrades: verifier of another code, challenge equal to the verifier, lower-case method; a failed verifier spends the code', async () => {
      const one = pkcePair();
      const two = pkcePair();
      const codeOne = await getCode({ code_challenge: one.challenge, code_challenge_method: 'S256' });
      const codeTwo = await getCode({ code_challenge: two.challenge, code_challenge_method: 'S256' });
      assertTokenError(
        await redeem(codeTwo, { code_verifier: one.verifier }),
        400,
        'invalid_grant',
        'verifier of another code',
      );
      assertTokenError(
        await redeem(codeTwo, { code_verifier: two.verifier }),
        400,
        'invalid_grant',
        'right verifier after a wrong one',
      );
      assertTokenError(
        await redeem(codeOne, { code_verifier: one.challenge }),
        400,
        'invalid_grant',
        'the challenge as verifier',
      );
      // "plain" smuggled as S256: the challenge is the verifier itself.
      const plainish = await getCode({ code_challenge: one.verifier, code_challenge_method: 'S256' });
      assertTokenError(await redeem(plainish, { code_verifier: one.verifier }), 400, 'invalid_grant', 'plain as S256');
      // Methods other than exactly S256 are refused at the authorization request.
      for (const method of ['s256', 'plain', 'S512', '']) {
        const res = await owner.request(
          'GET',
          codeUrl({
            ...base,
            client_id: client.clientId,
            code_challenge: one.challenge,
            code_challenge_method: method,
          }),
        );
        assert.equal(res.statusCode, 302, method);
        assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'invalid_request', method);
        assert.equal(new URL(res.headers.location as string).searchParams.get('code'), null, method);
      }
      const ok = pkcePair();
      assert.equal(
        (
          await redeem(await getCode({ code_challenge: ok.challenge, code_challenge_method: 'S256' }), {
            code_verifier: ok.verifier,
          })
        ).status,
        200,
      );
    });

    // ── Client authentication ───────────────────────────────────────────────────────────────

    test('wrong secret, unknown client and revoked client are indistinguishable: same status, body and headers', async () => {
      const revoked = await createOAuthClient(t.database, { redirectUris: [CB] });
      await revokeClient(t.database, revoked.clientId);
      const uncertified = await createOAuthClient(t.database, { redirectUris: [CB], certified: false });
      const code = await getCode();
      const unknownId = `fsm_${crypto.randomBytes(12).toString('hex')}`;
      const wrong = crypto.randomBytes(32).toString('base64url');
      const shape = (r: { status: number; headers: Record<string, unknown>; body: unknown }) => {
        const { date: _date, 'x-request-id': _requestId, ...headers } = r.headers;
        return { status: r.status, body: r.body, headers };
      };
      for (const form of ['body', 'basic'] as const) {
        const attempt = (id: string, secret: string) =>
          form === 'body'
            ? tokenRequest(t.app, { grant_type: 'authorization_code', code, client_id: id, client_secret: secret })
            : tokenRequest(t.app, { grant_type: 'authorization_code', code }, { authorization: basic(id, secret) });
        const reference = shape(await attempt(client.clientId, wrong));
        assert.equal(reference.status, 401, form);
        assert.equal((reference.body as { error: string }).error, 'invalid_client');
        assert.match(String(reference.headers['www-authenticate']), /^Basic /);
        for (const [what, id, secret] of [
          ['unknown client', unknownId, wrong],
          ['unknown client, real secret', unknownId, client.clientSecret],
          ['revoked client, right secret', revoked.clientId, revoked.clientSecret],
          ['uncertified client, wrong secret', uncertified.clientId, wrong],
        ] as const) {
          assert.deepEqual(shape(await attempt(id, secret)), reference, `${form}: ${what}`);
        }
        // No secret at all is a malformed request, answered alike for a real and an unknown client.
        if (form === 'body')
          assert.deepEqual(
            shape(await attempt(client.clientId, '')),
            shape(await attempt(unknownId, '')),
            'empty secret',
          );
      }
      assert.equal((await redeem(code)).status, 200, 'failed client authentications did not spend the code');
    });

    test('credentials, codes and tokens in the query string are refused', async () => {
      const code = await getCode({ access_type: 'offline' });
      const form = { grant_type: 'authorization_code', client_id: client.clientId, client_secret: client.clientSecret };
      const q = (params: Record<string, string>) => `/oauth2/token?${formEncode(params)}`;
      assertTokenError(await tokenRequest(t.app, form, {}, q({ code })), 400, 'invalid_request', 'code in the query');
      assertTokenError(
        await tokenRequest(t.app, { ...form, code }, {}, q({ client_secret: client.clientSecret })),
        400,
        'invalid_request',
        'secret in the query',
      );
      assertTokenError(
        await tokenRequest(
          t.app,
          { grant_type: 'authorization_code', code },
          { authorization: basic(client.clientId, client.clientSecret) },
          q({ x: '1' }),
        ),
        400,
        'invalid_request',
        'any query',
      );
      // GET with everything in the URL is no token endpoint at all: the endpoint takes POST only.
      const get = await t.app.inject({ method: 'GET', url: q({ ...form, code }) });
      assert.equal(get.statusCode, 405);
      assert.equal(get.headers.allow, 'POST');
      // The refused requests did not spend the code.
      const tokens = await redeem(code);
      assert.equal(tokens.status, 200);
      assertTokenError(
        await tokenRequest(
          t.app,
          { grant_type: 'refresh_token', client_id: client.clientId, client_secret: client.clientSecret },
          {},
          q({ refresh_token: tokens.body.refresh_token }),
        ),
        400,
        'invalid_request',
        'refresh token in the query',
      );
      // The API takes the access token from the Authorization header only.
      const inQuery = await call(t.app, undefined, 'GET', `/users?access_token=${tokens.body.access_token}`);
      assert.equal(inQuery.status, 401);
      const alongside = await call(
        t.app,
        tokens.body.access_token,
        'GET',
        `/users?access_token=${tokens.body.access_token}`,
      );
      assert.equal(alongside.status, 400); // an unknown query parameter
    });

    // ── Brute force ─────────────────────────────────────────────────────────────────────────

    test('sign-in brute force from fresh browsers: the lock follows the login, not the cookie; case and space variants do not sign in', async () => {
      const victim = await userWithLogin();
      const attempt = async (login: string, password: string) => {
        const browser = injectBrowser(t.app); // a new cookie jar each time, as an attacker would use
        const page = await browser.request('GET', codeUrl({ ...base, client_id: client.clientId }));
        const res = await browser.request('POST', formAction(page.body), {
          csrf: inputValue(page.body, 'csrf'),
          login,
          password,
        });
        return { res, browser };
      };
      const alert = (body: string) => /role="alert">([^<]*)</.exec(body)?.[1];
      for (let i = 0; i < 5; i++) assert.equal((await attempt(victim.login, `guess number ${i}`)).res.statusCode, 401);
      const right = await attempt(victim.login, victim.password);
      const wrongAgain = await attempt(victim.login, 'guess number 6');
      assert.equal(right.res.statusCode, 429);
      assert.equal(wrongAgain.res.statusCode, 429);
      assert.equal(alert(right.res.body), alert(wrongAgain.res.body), 'a locked login does not tell a right password');
      assert.equal(right.browser.jar.get('fsm_session'), undefined);
      // Variants of the login are other logins: none of them signs the victim in.
      for (const variant of [victim.login.toUpperCase(), ` ${victim.login}`]) {
        const v = await attempt(variant, victim.password);
        assert.equal(v.res.statusCode, 401, JSON.stringify(variant));
        assert.equal(v.browser.jar.get('fsm_session'), undefined);
      }
      t.clock.now += 15 * 60_000 + 1;
      assert.equal((await attempt(victim.login, victim.password)).res.statusCode, 303);
    });

    test('password spraying from one address: the per-address limit answers 429 with Retry-After before any password is checked; no header or URL trick escapes it', async () => {
      const browser = injectBrowser(t.app);
      const page = await browser.request('GET', codeUrl({ ...base, client_id: client.clientId }));
      const action = formAction(page.body);
      const csrf = inputValue(page.body, 'csrf');
      const cookie = `fsm_csrf=${browser.jar.get('fsm_csrf')}`;
      const formHeaders = { 'content-type': 'application/x-www-form-urlencoded', cookie };
      const spray = (login: string, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') =>
        t.app.inject({
          method: 'POST',
          url: action,
          remoteAddress,
          headers: { ...formHeaders, ...headers },
          payload: formEncode({ csrf, login, password: 'Summer2024!' }),
        });
      const attempts = async (login: string) =>
        (await t.database.db.selectFrom('login_attempts').select('id').where('login', '=', login).execute()).length;
      // The in-process counters' windows follow Date.now(): mocked, a window past any earlier one.
      mock.timers.enable({ apis: ['Date'], now: Date.now() + 2 * WINDOW_MS });
      t.config.rateLimitAuth = 2;
      try {
        assert.equal((await spray('spray-1')).statusCode, 401);
        assert.equal((await spray('spray-2')).statusCode, 401);
        const refused = await spray('spray-3');
        assert.equal(refused.statusCode, 429);
        assert.equal(refused.headers['retry-after'], '60');
        assert.equal(await attempts('spray-3'), 0, 'refused before the password was checked');
        // A failed client authentication at the token endpoint counts against the address too...
        const token = await tokenRequest(t.app, {
          grant_type: 'authorization_code',
          code: 'x'.repeat(43),
          client_id: client.clientId,
          client_secret: 'wrong',
        });
        assert.equal(token.status, 429);
        assert.ok(Number(token.headers['retry-after']) >= 1);
        // ...while an authenticated client counts in its own bucket (PRODUCT §8).
        assert.equal((await redeem('x'.repeat(43))).status, 400);
        // X-Forwarded-For and friends are not believed (no trustProxy).
        for (const h of ['x-forwarded-for', 'x-real-ip', 'forwarded', 'true-client-ip']) {
          const spoofed = await spray('spray-4', { [h]: h === 'forwarded' ? 'for=10.1.2.3' : '10.1.2.3' });
          assert.equal(spoofed.statusCode, 429, h);
        }
        // An absolute-form request target (RFC 9112 §3.2.2) reaches the same routes: counted too.
        const absLogin = await rawHttp(
          port,
          'POST',
          `http://127.0.0.1:${port}${action}`,
          formHeaders,
          formEncode({ csrf, login: 'spray-5', password: 'Summer2024!' }),
        );
        assert.equal(absLogin.status, 429, `absolute-form login: ${absLogin.body.slice(0, 200)}`);
        assert.equal(await attempts('spray-5'), 0);
        const absToken = await rawHttp(
          port,
          'POST',
          `http://evil.example/oauth2/token`,
          { 'content-type': 'application/x-www-form-urlencoded' },
          formEncode({
            grant_type: 'authorization_code',
            code: 'x'.repeat(43),
            client_id: client.clientId,
            client_secret: 'wrong',
          }),
        );
        assert.equal(absToken.status, 429, `absolute-form token: ${absToken.body.slice(0, 200)}`);
        assert.ok(Number(absToken.headers['retry-after']) >= 1);
        // Another address has its own budget; the window's end restores this one.
        assert.equal((await spray('spray-6', {}, '10.9.8.7')).statusCode, 401);
        mock.timers.tick(WINDOW_MS);
        assert.equal((await spray('spray-7')).statusCode, 401);
      } finally {
        mock.timers.reset();
        t.config.rateLimitAuth = 0;
      }
    });

    // ── CSRF ────────────────────────────────────────────────────────────────────────────────

    test('login CSRF: no cookies (cross-site POST), a token of another browser, an empty token: 403, no session, no password checked', async () => {
      const victim = injectBrowser(t.app);
      const attacker = injectBrowser(t.app);
      const vPage = await victim.request('GET', codeUrl({ ...base, client_id: client.clientId }));
      const aPage = await attacker.request('GET', codeUrl({ ...base, client_id: client.clientId }));
      const action = formAction(vPage.body);
      const login = `csrf-probe-${crypto.randomBytes(3).toString('hex')}`;
      const creds = { login, password: 'attacker password' };
      // Cross-site form POST: SameSite=Lax keeps the cookie at home, so only the field arrives.
      const noCookie = await t.app.inject({
        method: 'POST',
        url: action,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: formEncode({ csrf: inputValue(aPage.body, 'csrf'), ...creds }),
      });
      assert.equal(noCookie.statusCode, 403);
      assert.equal(
        noCookie.cookies.find((c) => c.name === 'fsm_session'),
        undefined,
      );
      // The attacker's own token in the victim's browser.
      const foreign = await victim.request('POST', action, { csrf: inputValue(aPage.body, 'csrf'), ...creds });
      assert.equal(foreign.statusCode, 403);
      // Empty cookie and empty field.
      const empty = await t.app.inject({
        method: 'POST',
        url: action,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'fsm_csrf=' },
        payload: formEncode({ csrf: '', ...creds }),
      });
      assert.equal(empty.statusCode, 403);
      assert.equal(victim.jar.get('fsm_session'), undefined);
      const recorded = await t.database.db
        .selectFrom('login_attempts')
        .select('id')
        .where('login', '=', login)
        .execute();
      assert.equal(recorded.length, 0);
    });

    test('consent CSRF: cross-site POST, token of another user’s session, token of a replaced or expired session: no code', async () => {
      // No remembered consent (earlier tests allowed this client): signing in again shows the page.
      await t.database.db.deleteFrom('oauth_consents').execute();
      const browser = injectBrowser(t.app);
      const url = codeUrl({ ...base, client_id: client.clientId, state: 'csrf', prompt: 'consent' });
      const signIn = async (br: Browser, who: { login: string; password: string }, u = url) => {
        const page = await br.request('GET', u);
        const res = await br.request('POST', formAction(page.body), { csrf: inputValue(page.body, 'csrf'), ...who });
        assert.equal(res.statusCode, 303);
        return br.request('GET', res.headers.location as string);
      };
      const consent = await signIn(browser, ownerA());
      const action = formAction(consent.body);
      const oldCsrf = inputValue(consent.body, 'csrf');
      const before = await codeCount();
      // Cross-site POST: no cookies at all, even with the genuine token.
      const crossSite = await t.app.inject({
        method: 'POST',
        url: action,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: formEncode({ csrf: oldCsrf, decision: 'allow' }),
      });
      assert.equal(crossSite.statusCode, 303);
      assert.ok(String(crossSite.headers.location).startsWith('/oauth2/code?'), 'back to sign-in, not to the client');
      // B's session token (another user, another browser) in A's browser.
      const other = injectBrowser(t.app);
      const bConsent = await signIn(other, { login: b.login, password: b.password });
      const foreign = await browser.request('POST', action, {
        csrf: inputValue(bConsent.body, 'csrf'),
        decision: 'allow',
      });
      assert.equal(foreign.statusCode, 403);
      assert.equal(foreign.headers.location, undefined);
      // Signing in again replaces the session: the old form's token is dead.
      const renewed = await signIn(
        browser,
        ownerA(),
        codeUrl({ ...base, client_id: client.clientId, state: 'csrf', prompt: 'login' }),
      );
      assert.notEqual(inputValue(renewed.body, 'csrf'), oldCsrf);
      const stale = await browser.request('POST', action, { csrf: oldCsrf, decision: 'allow' });
      assert.equal(stale.statusCode, 403);
      assert.equal(stale.headers.location, undefined);
      // An expired session (8 h): back to sign-in, whatever token is sent.
      const liveCsrf = inputValue(renewed.body, 'csrf');
      t.clock.now += 8 * 3600_000 + 1;
      const expired = await browser.request('POST', action, { csrf: liveCsrf, decision: 'allow' });
      assert.equal(expired.statusCode, 303);
      assert.ok(String(expired.headers.location).startsWith('/oauth2/code?'));
      assert.equal(await codeCount(), before, 'no code was issued');
    });

    // ── Reflection and framing ──────────────────────────────────────────────────────────────

    test('state is reflected exactly URL-encoded in Location and HTML-escaped in pages', async () => {
      const states = [
        '"><script>alert(1)</script>',
        'x&code=evil',
        `'"><img src=x onerror=alert(1)>&code=evil&error=none#frag`,
      ];
      for (const state of states) {
        const encoded = new URLSearchParams({ state }).toString();
        const checkLocation = (location: string, what: string) => {
          assert.ok(location.includes(`?${encoded}`) || location.includes(`&${encoded}`), `${what}: ${location}`);
          assert.doesNotMatch(location, /[<>"' ]/, what);
          const url = new URL(location);
          assert.equal(url.origin + url.pathname, CB, what);
          assert.deepEqual(url.searchParams.getAll('state'), [state], what);
          assert.equal(url.hash, '', what);
          assert.ok(!url.searchParams.getAll('code').includes('evil'), what);
          return url;
        };
        // Login and consent pages: the state sits in the form action, escaped.
        const fresh = await t.app.inject(codeUrl({ ...base, client_id: client.clientId, state }));
        const consent = await ownerConsent(codeUrl({ ...base, client_id: client.clientId, state }));
        for (const [what, page] of [
          ['login', fresh],
          ['consent', consent],
        ] as const) {
          assert.equal(page.statusCode, 200, what);
          assert.ok(!page.body.includes('<script>') && !page.body.includes('<img'), what);
          assert.ok(!page.body.includes(state), what);
          assert.deepEqual(new URL(formAction(page.body), 'http://x').searchParams.getAll('state'), [state], what);
        }
        // Allow, deny and a protocol error all carry it back exactly.
        const allowed = await authorizeWithInject(owner, { client_id: client.clientId, state }, ownerA());
        const url = checkLocation(allowed.location.toString(), 'allow');
        assert.equal(url.searchParams.getAll('code').length, 1);
        assert.match(url.searchParams.get('code')!, /^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/);
        const denied = await owner.request('POST', formAction(consent.body), {
          csrf: inputValue(consent.body, 'csrf'),
          decision: 'deny',
        });
        assert.equal(
          checkLocation(denied.headers.location as string, 'deny').searchParams.get('error'),
          'access_denied',
        );
        const bad = await t.app.inject(codeUrl({ ...base, client_id: client.clientId, state, response_type: 'token' }));
        assert.equal(
          checkLocation(bad.headers.location as string, 'protocol error')
            .searchParams.getAll('error')
            .join(),
          'unsupported_response_type',
        );
      }
    });

    test('clickjacking: every page (error, login, failed and refused sign-in, consent, consent errors) is unframeable and uncached', async () => {
      const browser = injectBrowser(t.app);
      const url = codeUrl({ ...base, client_id: client.clientId, prompt: 'consent' });
      assertUnframeable(await browser.request('GET', codeUrl({ ...base, client_id: 'nope' })), 'error page');
      const login = await browser.request('GET', url);
      assertUnframeable(login, 'login');
      const action = formAction(login.body);
      assertUnframeable(
        await browser.request('POST', action, { csrf: 'forged', login: 'x', password: 'y' }),
        'login CSRF refusal',
      );
      const failed = await browser.request('POST', action, {
        csrf: inputValue(login.body, 'csrf'),
        login: 'nobody-at-all',
        password: 'wrong password',
      });
      assert.equal(failed.statusCode, 401);
      assertUnframeable(failed, 'failed sign-in');
      const consent = await ownerConsent(url);
      assertUnframeable(consent, 'consent');
      assertUnframeable(
        await owner.request('POST', formAction(consent.body), { csrf: 'forged', decision: 'allow' }),
        'consent CSRF refusal',
      );
      assertUnframeable(
        await owner.request('POST', formAction(consent.body), {
          csrf: inputValue(consent.body, 'csrf'),
          decision: 'maybe',
        }),
        'consent without a decision',
      );
    });

    // ── Deleted users, revoked and uncertified clients, scope ──────────────────────────────

    test('a user deleted through the API (PATCH deleted:true): tokens and refresh tokens refused, session ended, pending code dead, restore revives nothing', async () => {
      const u = await userWithLogin();
      const browser = injectBrowser(t.app);
      const tokens = await redeem(await getCode({ access_type: 'offline' }, client.clientId, browser, u));
      assert.equal(await apiStatus(tokens.body.access_token), 200);
      const pending = await getCode({ access_type: 'offline' }, client.clientId, browser, u);
      assert.equal(
        (await call(t.app, await adminA(), 'PATCH', `/users/${u.id}`, { users: [{ deleted: true }] })).status,
        200,
      );

      assert.equal(await apiStatus(tokens.body.access_token), 401);
      assertTokenError(await refresh(tokens.body.refresh_token), 400, 'invalid_grant', 'refresh');
      assertTokenError(await redeem(pending), 400, 'invalid_grant', 'code issued before the deletion');
      const sessions = await t.database.db
        .selectFrom('auth_sessions')
        .select('id')
        .where('user_id', '=', u.id)
        .execute();
      assert.equal(sessions.length, 0);
      const page = await browser.request('GET', codeUrl({ ...base, client_id: client.clientId }));
      assert.match(page.body, /name="password"/, 'the session is over: the login form again');

      // Restoring the user gives back the account, not the old tokens, session or code.
      assert.equal(
        (await call(t.app, await adminA(), 'PATCH', `/users/${u.id}`, { users: [{ deleted: false }] })).status,
        200,
      );
      assert.equal(await apiStatus(tokens.body.access_token), 401);
      assertTokenError(await refresh(tokens.body.refresh_token), 400, 'invalid_grant', 'refresh after restore');
      assertTokenError(await redeem(pending), 400, 'invalid_grant', 'pending code after restore');
      assert.match(
        (await browser.request('GET', codeUrl({ ...base, client_id: client.clientId }))).body,
        /name="password"/,
      );
    });

    test('a user deleted physically (DELETE /users/ID): tokens, refresh tokens, session and codes are gone', async () => {
      const u = await userWithLogin();
      const browser = injectBrowser(t.app);
      const tokens = await redeem(await getCode({ access_type: 'offline' }, client.clientId, browser, u));
      const pending = await getCode({}, client.clientId, browser, u);
      assert.equal((await call(t.app, await adminA(), 'DELETE', `/users/${u.id}`)).status, 200);
      assert.equal(await apiStatus(tokens.body.access_token), 401);
      assertTokenError(await refresh(tokens.body.refresh_token), 400, 'invalid_grant', 'refresh');
      assertTokenError(await redeem(pending), 400, 'invalid_grant', 'pending code');
      assert.match(
        (await browser.request('GET', codeUrl({ ...base, client_id: client.clientId }))).body,
        /name="password"/,
      );
    });

    test('a revoked client: its access tokens refused by the API, its refresh tokens at the token endpoint, its requests get an error page', async () => {
      const rc = await createOAuthClient(t.database, { redirectUris: [CB] });
      const tokens = await redeem(await getCode({ access_type: 'offline' }, rc.clientId), {}, rc);
      const pending = await getCode({}, rc.clientId);
      assert.equal(await apiStatus(tokens.body.access_token), 200);
      await revokeClient(t.database, rc.clientId);
      assert.equal(await apiStatus(tokens.body.access_token), 401);
      assertTokenError(await refresh(tokens.body.refresh_token, rc), 401, 'invalid_client', 'refresh');
      assertTokenError(await redeem(pending, {}, rc), 401, 'invalid_client', 'pending code');
      assertErrorPage(
        await owner.request('GET', codeUrl({ ...base, client_id: rc.clientId })),
        'authorization request',
      );
      // Even were the flag lifted by hand, the tokens stay revoked.
      await t.database.db
        .updateTable('oauth_clients')
        .set({ revoked: 0 })
        .where('client_id', '=', rc.clientId)
        .execute();
      assert.equal(await apiStatus(tokens.body.access_token), 401);
      assertTokenError(await refresh(tokens.body.refresh_token, rc), 400, 'invalid_grant', 'refresh after un-revoking');
    });

    test('scope: anything but the literal default is invalid_scope; a scope on the code grant cannot widen the token', async () => {
      for (const scope of [
        'DEFAULT',
        'default users.write',
        'default ',
        ' default',
        'default,users.read',
        'users.read',
        'openid',
        '*',
        '',
      ]) {
        const res = await owner.request('GET', codeUrl({ ...base, client_id: client.clientId, scope }));
        assert.equal(res.statusCode, 302, JSON.stringify(scope));
        const loc = new URL(res.headers.location as string);
        assert.equal(loc.searchParams.get('error'), 'invalid_scope', JSON.stringify(scope));
        assert.equal(loc.searchParams.get('code'), null);
      }
      const narrow = await createOAuthClient(t.database, { redirectUris: [CB], permissions: ['users.read'] });
      const res = await redeem(
        await getCode({}, narrow.clientId),
        { scope: 'users.write jobs.read jobs.write' },
        narrow,
      );
      assert.equal(res.status, 200);
      const row = await t.database.db
        .selectFrom('oauth_tokens')
        .select('permissions')
        .where('token_hash', '=', hashToken(res.body.access_token))
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row.permissions), ['users.read']);
      assert.equal((await call(t.app, res.body.access_token, 'GET', '/jobs')).status, 403);
      assert.equal(
        (
          await call(t.app, res.body.access_token, 'PATCH', `/users/${a.adminId}`, {
            users: [{ firstName: 'Mallory' }],
          })
        ).status,
        403,
      );
    });

    test('an access token of account A from the full flow never reads account B', async () => {
      const tokens = await redeem(await getCode());
      const token = tokens.body.access_token as string;
      assert.equal((await call(t.app, token, 'GET', `/users/${b.adminId}`)).status, 404);
      const byId = await call(t.app, token, 'GET', `/users?where=${encodeURIComponent(`id=${b.adminId}`)}`);
      assert.equal(byId.status, 200);
      assert.equal(byId.body.metadata.recordsCount, 0);
      const all = await call(t.app, token, 'GET', '/users?fields=account');
      assert.ok(all.body.users.length > 0);
      assert.ok(all.body.users.every((u: { account: { id: number } }) => u.account.id === a.accountId));
      const patched = await call(t.app, token, 'PATCH', `/users/${b.adminId}`, { users: [{ firstName: 'Mallory' }] });
      assert.equal(patched.status, 422);
      // B's owner's session cannot be borrowed either: A's code carries A's account.
      const row = await t.database.db
        .selectFrom('oauth_tokens')
        .select(['account_id', 'user_id'])
        .where('token_hash', '=', hashToken(token))
        .executeTakeFirstOrThrow();
      assert.deepEqual([row.account_id, row.user_id], [a.accountId, a.adminId]);
    });
  });
}
