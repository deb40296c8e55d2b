import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  authorizeWithInject,
  call,
  createOAuthClient,
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

const CB = 'http://127.0.0.1:9/cb';
const PAGE = '/oauth2/authorizations';
type Client = { clientId: string; clientSecret: string };

function assertPageHeaders(headers: Record<string, unknown>) {
  assert.match(String(headers['content-type']), /^text\/html;charset=utf-8/);
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.match(String(headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.equal(headers['referrer-policy'], 'no-referrer');
  assert.equal(headers['cache-control'], 'no-store');
}

/** The revoke buttons of the page, by client id. */
const revokeButtons = (html: string) =>
  [...html.matchAll(/<button type="submit" name="revoke" value="([^"]+)"/g)].map((m) => m[1]);

for (const dialect of DIALECTS) {
  describe(`connected applications page (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let alice: Tenant;
    let bob: Tenant;
    let dispatch: Client;
    let ledger: Client;

    /** Tokens (access and refresh) for `who` through `client`, by the full flow in `browser`. */
    const connect = async (browser: ReturnType<typeof injectBrowser>, client: Client, who: Tenant) => {
      const { code } = await authorizeWithInject(
        browser,
        { client_id: client.clientId, access_type: 'offline' },
        { login: who.login, password: who.password },
      );
      const res = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: code!,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      assert.equal(res.status, 200);
      return res.body as { access_token: string; refresh_token: string };
    };
    const api = async (token: string) => (await call(t.app, token, 'GET', '/users')).status;
    const refreshes = async (client: Client, refreshToken: string) =>
      (
        await tokenRequest(t.app, {
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        })
      ).status;

    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0; // limits have their own tests
      alice = await createTenant(t, 'Alpha');
      bob = await createTenant(t, 'Beta');
      dispatch = await createOAuthClient(t.database, {
        redirectUris: [CB],
        name: 'Dispatch <Pro>',
        permissions: ['users.read', 'jobs.read', 'jobs.write', 'visits.read'],
      });
      ledger = await createOAuthClient(t.database, { redirectUris: [CB], name: 'Ledger', permissions: ['users.read'] });
    });
    after(() => t?.close());

    test('no session: the login form first, then back to the page', async () => {
      const browser = injectBrowser(t.app);
      const first = await browser.request('GET', PAGE);
      assert.equal(first.statusCode, 200);
      assertPageHeaders(first.headers);
      assert.match(first.body, /<meta name="viewport"/);
      assert.match(first.body, /name="login"/);
      assert.match(first.body, /name="password"/);
      const action = formAction(first.body);
      const noCsrf = await browser.request('POST', action, { login: alice.login, password: alice.password });
      assert.equal(noCsrf.statusCode, 403);
      const wrong = await browser.request('POST', action, {
        csrf: inputValue(first.body, 'csrf'),
        login: alice.login,
        password: 'wrong password!',
      });
      assert.equal(wrong.statusCode, 401);
      assertPageHeaders(wrong.headers);
      const ok = await browser.request('POST', action, {
        csrf: inputValue(first.body, 'csrf'),
        login: alice.login,
        password: alice.password,
      });
      assert.equal(ok.statusCode, 303);
      assert.equal(ok.headers.location, PAGE);
      const page = await browser.request('GET', PAGE);
      assert.match(page.body, /<h1>Connected applications<\/h1>/);
      assert.doesNotMatch(page.body, /name="password"/);
    });

    test('lists each client holding live tokens for the owner: name, permissions, since when; nobody else’s', async () => {
      const browser = injectBrowser(t.app);
      const since = t.clock.now;
      await connect(browser, dispatch, alice);
      await connect(injectBrowser(t.app), ledger, bob); // Bob's connection is not Alice's business
      const page = await browser.request('GET', PAGE);
      assert.equal(page.statusCode, 200);
      assertPageHeaders(page.headers);
      const buttons = revokeButtons(page.body);
      // createTenant's own test client holds a token for Alice too (issued directly): it is listed.
      assert.ok(buttons.includes(dispatch.clientId));
      assert.ok(buttons.includes(alice.clientId));
      assert.ok(!buttons.includes(ledger.clientId), 'Bob’s client is not on Alice’s page');
      assert.ok(page.body.includes('Dispatch &lt;Pro&gt;'), 'the name, escaped');
      // Each permission in words beside its name, as the consent page shows them.
      assert.ok(
        page.body.includes(
          '<strong>Jobs</strong>: <span class="words">Read jobs</span> <code>jobs.read</code>, <span class="words">Change jobs</span> <code>jobs.write</code>',
        ),
        page.body,
      );
      assert.ok(
        page.body.includes(
          '<strong>Visits</strong>: <span class="words">Read visits</span> <code>visits.read</code></li>',
        ),
      );
      assert.ok(
        page.body.includes('<strong>Users</strong>: <span class="words">Read users</span> <code>users.read</code>'),
      );
      assert.doesNotMatch(page.body, /users<\/strong>: read/, 'not the bare access word alone');
      assert.ok(
        page.body.includes(`datetime="${new Date(since).toISOString()}"`) ||
          page.body.includes(new Date(since).toISOString().slice(0, 16)),
      );
      assert.equal((page.body.match(/<form /g) ?? []).length, buttons.length, 'one form per client');
      assert.equal((page.body.match(/name="csrf"/g) ?? []).length, buttons.length, 'each CSRF-protected');
    });

    test('revoke: CSRF-checked, 303 back; ends every token of that client for that owner and nothing else', async () => {
      const browser = injectBrowser(t.app);
      const mine1 = await connect(browser, dispatch, alice);
      const mine2 = await connect(browser, dispatch, alice);
      const otherClient = await connect(browser, ledger, alice);
      const otherOwner = await connect(injectBrowser(t.app), dispatch, bob);
      const pending = await authorizeWithInject(
        browser,
        { client_id: dispatch.clientId },
        { login: alice.login, password: alice.password },
      );
      const page = await browser.request('GET', PAGE);
      const csrf = inputValue(page.body, 'csrf');

      for (const forged of [
        {},
        { csrf: 'forged' } as Record<string, string>,
        { csrf: inputValue((await injectBrowser(t.app).request('GET', PAGE)).body, 'csrf') },
      ]) {
        const res = await browser.request('POST', PAGE, { ...forged, revoke: dispatch.clientId });
        assert.equal(res.statusCode, 403);
        assertPageHeaders(res.headers);
      }
      assert.equal(await api(mine1.access_token), 200, 'nothing revoked by the refused forms');

      const res = await browser.request('POST', PAGE, { csrf, revoke: dispatch.clientId });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${PAGE}?revoked=${dispatch.clientId}`);
      for (const tk of [mine1, mine2]) {
        assert.equal(await api(tk.access_token), 401);
        assert.equal(await refreshes(dispatch, tk.refresh_token), 400);
      }
      const redeemed = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: pending.code!,
        client_id: dispatch.clientId,
        client_secret: dispatch.clientSecret,
      });
      assert.equal(redeemed.status, 400, 'a code issued just before does not bring the connection back');
      assert.equal(await api(otherClient.access_token), 200, 'another client of the same owner');
      assert.equal(await refreshes(ledger, otherClient.refresh_token), 200);
      assert.equal(await api(otherOwner.access_token), 200, 'the same client for another owner');
      assert.equal(await refreshes(dispatch, otherOwner.refresh_token), 200);
      const after = await browser.request('GET', res.headers.location as string);
      assert.ok(!revokeButtons(after.body).includes(dispatch.clientId));
      assert.ok(revokeButtons(after.body).includes(ledger.clientId));
      // The confirmation names the application; a forged one for an app still connected says nothing.
      assert.match(after.body, /<p class="done" role="status">Done: <strong>[^<]+<\/strong> no longer has access/);
      const forged = await browser.request('GET', `${PAGE}?revoked=${ledger.clientId}`);
      assert.doesNotMatch(forged.body, /class="done"/);
      // The consent is forgotten with the access: the next authorization asks again; the other client's stays.
      const again = await authorizeWithInject(
        browser,
        { client_id: dispatch.clientId },
        { login: alice.login, password: alice.password },
      );
      assert.equal(again.skipped, false, 'asked again after revoking');
      const ledgerAgain = await authorizeWithInject(
        browser,
        { client_id: ledger.clientId },
        { login: alice.login, password: alice.password },
      );
      assert.equal(ledgerAgain.skipped, true, 'the other client is still remembered');
    });

    test('a POST without a session goes back to the page (login form); expired tokens are not listed', async () => {
      const res = await injectBrowser(t.app).request('POST', PAGE, { csrf: 'x', revoke: ledger.clientId });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, PAGE);
      const browser = injectBrowser(t.app);
      const { code } = await authorizeWithInject(
        browser,
        { client_id: ledger.clientId },
        { login: bob.login, password: bob.password },
      );
      await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: code!,
        client_id: ledger.clientId,
        client_secret: ledger.clientSecret,
      });
      assert.ok(revokeButtons((await browser.request('GET', PAGE)).body).includes(ledger.clientId));
      t.clock.now += 61 * 24 * 3600 * 1000; // past every access and refresh token's lifetime
      try {
        const page = await browser.request('GET', PAGE);
        assert.match(page.body, /name="password"/, 'the session is over too');
        const again = injectBrowser(t.app);
        const form = await again.request('GET', PAGE);
        await again.request('POST', formAction(form.body), {
          csrf: inputValue(form.body, 'csrf'),
          login: bob.login,
          password: bob.password,
        });
        const list = await again.request('GET', PAGE);
        assert.deepEqual(revokeButtons(list.body), []);
        assert.match(list.body, /No application has access to your account/);
      } finally {
        t.clock.now -= 61 * 24 * 3600 * 1000;
      }
    });
  });
}
