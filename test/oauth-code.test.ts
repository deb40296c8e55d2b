import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../src/app.js';
import { hashToken } from '../src/auth/secrets.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import {
  authorizeWithInject,
  codeUrl,
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  formAction,
  injectBrowser,
  inputValue,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

const CB = 'http://127.0.0.1:9/cb';
const base = { response_type: 'code', scope: 'default' };

/** The page answer of an unusable request: HTML, 400, never a redirect. */
function assertErrorPage(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  assert.equal(res.statusCode, 400);
  assert.equal(res.headers.location, undefined);
  assert.match(String(res.headers['content-type']), /^text\/html;charset=utf-8/);
}

function assertPageHeaders(headers: Record<string, unknown>) {
  assert.match(String(headers['content-type']), /^text\/html;charset=utf-8/);
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.match(String(headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.match(String(headers['content-security-policy']), /default-src 'none'/);
  assert.equal(headers['referrer-policy'], 'no-referrer');
  assert.equal(headers['cache-control'], 'no-store');
}

for (const dialect of DIALECTS) {
  describe(`authorization endpoint (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let clientId: string;
    let multiId: string;
    const owner = () => ({ login: tenant.login, password: tenant.password });

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0; // these suites send far more than a browser would; limits have their own tests
      tenant = await createTenant(t);
      ({ clientId } = await createOAuthClient(t.database, { redirectUris: [CB], name: 'Dispatch <Pro>' }));
      ({ clientId: multiId } = await createOAuthClient(t.database, { redirectUris: [CB, 'https://app.example/cb'] }));
    });
    after(() => t?.close());

    test('unknown or revoked client, and bad redirect_uri get an error page, never a redirect', async () => {
      assertErrorPage(await t.app.inject(codeUrl({ ...base, client_id: 'nope' })));
      assertErrorPage(await t.app.inject(codeUrl({ ...base })));
      assertErrorPage(
        await t.app.inject(codeUrl({ ...base, client_id: clientId, redirect_uri: 'https://evil.example/cb' })),
      );
      assertErrorPage(await t.app.inject(codeUrl({ ...base, client_id: clientId, redirect_uri: `${CB}/` })));
      // Several registered URIs: the request must name one.
      assertErrorPage(await t.app.inject(codeUrl({ ...base, client_id: multiId })));
      const { clientId: revoked } = await createOAuthClient(t.database, { redirectUris: [CB] });
      await t.database.db.updateTable('oauth_clients').set({ revoked: 1 }).where('client_id', '=', revoked).execute();
      assertErrorPage(await t.app.inject(codeUrl({ ...base, client_id: revoked })));
      // A non-loopback http URI that reached storage some other way is still refused.
      const { clientId: plain } = await createOAuthClient(t.database, { redirectUris: ['http://app.example/cb'] });
      assertErrorPage(await t.app.inject(codeUrl({ ...base, client_id: plain })));
    });

    test('protocol errors redirect back with error and state', async () => {
      const cases: [Record<string, string>, string][] = [
        [{ response_type: 'token' }, 'unsupported_response_type'],
        [{ scope: 'users.read' }, 'invalid_scope'],
        [{ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
        [{ code_challenge: 'a'.repeat(43) }, 'invalid_request'],
        [{ access_type: 'forever' }, 'invalid_request'],
      ];
      for (const [extra, error] of cases) {
        const res = await t.app.inject(
          codeUrl({ ...base, client_id: multiId, redirect_uri: 'https://app.example/cb', state: 's 1&x', ...extra }),
        );
        assert.equal(res.statusCode, 302, JSON.stringify(extra));
        const loc = new URL(res.headers.location as string);
        assert.equal(loc.origin + loc.pathname, 'https://app.example/cb');
        assert.equal(loc.searchParams.get('error'), error);
        assert.equal(loc.searchParams.get('state'), 's 1&x');
      }
      const missingScope = await t.app.inject(codeUrl({ response_type: 'code', client_id: clientId }));
      assert.equal(new URL(missingScope.headers.location as string).searchParams.get('error'), 'invalid_scope');
      const dup = await t.app.inject(`${codeUrl({ ...base, client_id: clientId })}&scope=default`);
      assert.equal(new URL(dup.headers.location as string).searchParams.get('error'), 'invalid_request');
    });

    test('login page: form, security headers, pre-session CSRF cookie, escaped content', async () => {
      const res = await t.app.inject(codeUrl({ ...base, client_id: clientId, state: '"><script>alert(1)</script>' }));
      assert.equal(res.statusCode, 200);
      assertPageHeaders(res.headers);
      assert.match(res.body, /<meta name="viewport"/);
      assert.match(res.body, /<input type="text" id="login" name="login"/);
      assert.match(res.body, /<input type="password" id="password" name="password"/);
      assert.equal(res.body.match(/<button/g)?.length, 1);
      assert.match(res.body, /<label for="login">/);
      assert.ok(!res.body.includes('<script>'));
      assert.ok(res.body.includes('Dispatch &lt;Pro&gt;'));
      const cookie = String(res.headers['set-cookie']);
      assert.match(cookie, /^fsm_csrf=/);
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
      assert.match(cookie, /Path=\/oauth2/);
      assert.doesNotMatch(cookie, /Secure/);
      assert.equal(res.headers['strict-transport-security'], undefined);
    });

    test('sign-in: CSRF required, wrong password and unknown login look the same, success is a 303 with a session', async () => {
      const browser = injectBrowser(t.app);
      const page = await browser.request('GET', codeUrl({ ...base, client_id: clientId }));
      const action = formAction(page.body);
      assert.ok(action.startsWith('/oauth2/login?'));
      const noCsrf = await browser.request('POST', action, { login: tenant.login, password: tenant.password });
      assert.equal(noCsrf.statusCode, 403);
      assert.equal(browser.jar.get('fsm_session'), undefined);
      const csrf = inputValue(page.body, 'csrf');
      const wrong = await browser.request('POST', action, { csrf, login: tenant.login, password: 'wrong password!' });
      const unknown = await browser.request('POST', action, {
        csrf,
        login: 'nobody-here',
        password: 'wrong password!',
      });
      assert.equal(wrong.statusCode, 401);
      assert.equal(unknown.statusCode, 401);
      const msg = (b: string) => /role="alert">([^<]*)</.exec(b)?.[1];
      assert.equal(msg(wrong.body), msg(unknown.body));
      const ok = await browser.request('POST', action, { csrf, login: tenant.login, password: tenant.password });
      assert.equal(ok.statusCode, 303);
      assert.ok(String(ok.headers.location).startsWith('/oauth2/code?'));
      assert.match(
        String(ok.headers['set-cookie']),
        /fsm_session=.*HttpOnly.*SameSite=Lax|fsm_session=.*SameSite=Lax.*HttpOnly/,
      );
      // The session is stored only hashed.
      const stored = await t.database.db.selectFrom('auth_sessions').select('session_hash').execute();
      assert.ok(stored.some((s) => s.session_hash === hashToken(browser.jar.get('fsm_session')!)));

      // Signed in: straight to consent, with the client's name and every permission asked.
      const consent = await browser.request('GET', codeUrl({ ...base, client_id: clientId, state: 'a b&c=<d>' }));
      assert.equal(consent.statusCode, 200);
      assertPageHeaders(consent.headers);
      assert.ok(consent.body.includes('Dispatch &lt;Pro&gt;'));
      for (const p of ALL_PERMISSIONS) assert.ok(consent.body.includes(p), p);
      assert.match(consent.body, /<button type="submit" name="decision" value="allow">/);
      assert.match(consent.body, /<button type="submit" name="decision" value="deny"/);
      assert.match(consent.body, /name="reauthenticate"/);
      assert.doesNotMatch(consent.body, /name="permissions"/);
      // Consent CSRF is tied to the session.
      const forged = await browser.request('POST', formAction(consent.body), {
        decision: 'allow',
        csrf: inputValue(page.body, 'csrf'),
      });
      assert.equal(forged.statusCode, 403);
      assert.equal(forged.headers.location, undefined);
      const denied = await browser.request('POST', formAction(consent.body), {
        decision: 'deny',
        csrf: inputValue(consent.body, 'csrf'),
      });
      assert.equal(denied.statusCode, 302);
      const loc = new URL(denied.headers.location as string);
      assert.equal(loc.searchParams.get('error'), 'access_denied');
      assert.equal(loc.searchParams.get('state'), 'a b&c=<d>');
      assert.equal(loc.searchParams.get('code'), null);

      // prompt=login shows the login form despite the session.
      const again = await browser.request('GET', codeUrl({ ...base, client_id: clientId, prompt: 'login' }));
      assert.match(again.body, /name="password"/);
    });

    test('allow: 256-bit single-use code stored hashed with the request details', async () => {
      const browser = injectBrowser(t.app);
      const state = 'x y&z=<1>';
      const r = await authorizeWithInject(
        browser,
        { client_id: clientId, state, access_type: 'offline', redirect_uri: CB },
        owner(),
      );
      assert.equal(r.status, 302);
      assert.equal(`${r.location.origin}${r.location.pathname}`, CB);
      assert.equal(r.location.searchParams.get('state'), state);
      // Its account, a dot and 256 random bits (43 base64url characters): found in that account alone.
      assert.equal(r.code!.split('.')[0], String(tenant.accountId));
      assert.match(r.code!, /^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/);
      const row = await t.database.db
        .selectFrom('oauth_codes')
        .selectAll()
        .where('code_hash', '=', hashToken(r.code!))
        .executeTakeFirstOrThrow();
      assert.equal(row.client_id, clientId);
      assert.equal(row.user_id, tenant.adminId);
      assert.equal(row.account_id, tenant.accountId);
      assert.equal(row.redirect_uri, CB);
      assert.equal(row.offline, 1);
      assert.equal(row.expires_at - row.created, 60_000);
      assert.deepEqual(JSON.parse(row.permissions), ALL_PERMISSIONS);
      const plain = await t.database.db
        .selectFrom('oauth_codes')
        .select('id')
        .where('code_hash', '=', r.code!)
        .execute();
      assert.equal(plain.length, 0);

      // reauthenticate wins over access_type=offline; no redirect_uri sent means none stored.
      const again = await authorizeWithInject(browser, { client_id: clientId, access_type: 'offline' }, owner(), {
        decision: 'allow',
        reauthenticate: '1',
      });
      const row2 = await t.database.db
        .selectFrom('oauth_codes')
        .selectAll()
        .where('code_hash', '=', hashToken(again.code!))
        .executeTakeFirstOrThrow();
      assert.equal(row2.offline, 0);
      assert.equal(row2.redirect_uri, null);
      assert.equal(again.location.searchParams.has('state'), false);
    });

    test('permission choice: one ticked checkbox per permission; the code keeps what the owner kept', async () => {
      const asked = ['users.read', 'jobs.read', 'jobs.write'];
      const { clientId: choosy } = await createOAuthClient(t.database, {
        redirectUris: [CB],
        permissions: asked,
        allowPermissionChoice: true,
      });
      const browser = injectBrowser(t.app);
      const page = await browser.request('GET', codeUrl({ ...base, client_id: choosy }));
      const signIn = await browser.request('POST', formAction(page.body), {
        csrf: inputValue(page.body, 'csrf'),
        ...owner(),
      });
      const consent = await browser.request('GET', signIn.headers.location as string);
      for (const p of asked)
        assert.match(consent.body, new RegExp(`type="checkbox" id="p\\d" name="permissions" value="${p}" checked`));
      const csrf = inputValue(consent.body, 'csrf');
      const none = await browser.request('POST', formAction(consent.body), { csrf, decision: 'allow' });
      assert.equal(none.statusCode, 400);
      const res = await browser.request('POST', formAction(consent.body), {
        csrf,
        decision: 'allow',
        permissions: ['jobs.write', 'users.read', 'users.write'],
      });
      const code = new URL(res.headers.location as string).searchParams.get('code')!;
      const row = await t.database.db
        .selectFrom('oauth_codes')
        .select('permissions')
        .where('code_hash', '=', hashToken(code))
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row.permissions), ['users.read', 'jobs.write']);
    });

    test('throttling: 5 failures lock the login for 15 minutes, known or not; deleted users cannot sign in', async () => {
      const browser = injectBrowser(t.app);
      const page = await browser.request('GET', codeUrl({ ...base, client_id: clientId }));
      const action = formAction(page.body);
      const csrf = inputValue(page.body, 'csrf');
      const attempt = (login: string, password: string) => browser.request('POST', action, { csrf, login, password });
      for (let i = 0; i < 5; i++) assert.equal((await attempt(tenant.login, `wrong-${i}-password`)).statusCode, 401);
      const locked = await attempt(tenant.login, tenant.password);
      assert.equal(locked.statusCode, 429);
      assert.equal(browser.jar.get('fsm_session'), undefined);
      t.clock.now += 14 * 60 * 1000;
      assert.equal((await attempt(tenant.login, tenant.password)).statusCode, 429);
      t.clock.now += 60 * 1000 + 1;
      assert.equal((await attempt(tenant.login, tenant.password)).statusCode, 303);

      // Deleted: same answer as a wrong password, and an existing session no longer counts.
      const consent = await browser.request('GET', codeUrl({ ...base, client_id: clientId, prompt: 'consent' }));
      assert.match(consent.body, /name="decision"/);
      const other = await createTenant(t, 'Gone');
      await t.database.db.updateTable('users').set({ deleted: 1 }).where('id', '=', tenant.adminId).execute();
      try {
        const res = await attempt(tenant.login, tenant.password);
        assert.equal(res.statusCode, 401);
        const back = await browser.request('POST', formAction(consent.body), {
          csrf: inputValue(consent.body, 'csrf'),
          decision: 'allow',
        });
        assert.equal(back.statusCode, 303);
        assert.ok(String(back.headers.location).startsWith('/oauth2/code?'));
        assert.equal(
          await t.database.db
            .selectFrom('oauth_codes')
            .select('id')
            .where('user_id', '=', tenant.adminId)
            .where('created', '=', t.clock.now)
            .executeTakeFirst(),
          undefined,
        );
        // Unknown logins lock the same way.
        for (let i = 0; i < 5; i++) await attempt('no-such-login', 'whatever-123');
        assert.equal((await attempt('no-such-login', 'whatever-123')).statusCode, 429);
        assert.equal((await attempt(other.login, other.password)).statusCode, 303);
      } finally {
        await t.database.db.updateTable('users').set({ deleted: 0 }).where('id', '=', tenant.adminId).execute();
      }
    });

    test('an https public URL makes cookies Secure and adds Strict-Transport-Security', async () => {
      const app = await buildApp({
        config: { ...t.config, publicUrl: 'https://auth.example' },
        database: t.database,
        clock: () => t.clock.now,
      });
      try {
        const res = await app.inject(codeUrl({ ...base, client_id: clientId }));
        assert.match(String(res.headers['set-cookie']), /; Secure/);
        assert.match(String(res.headers['strict-transport-security']), /max-age=\d+/);
        const token = await app.inject({
          method: 'POST',
          url: '/oauth2/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'grant_type=refresh_token',
        });
        assert.match(String(token.headers['strict-transport-security']), /max-age=\d+/);
      } finally {
        await app.close();
      }
    });
  });
}
