import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import {
  addUser,
  authorizeWithInject,
  call,
  codeUrl,
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
const CLI = 'dist/src/cli/index.js';

/**
 * A new password ends the user's sign-in sessions (whoever signed in with the old one is signed out
 * of the authorization pages), through the API and the CLI alike; the tokens the user's apps hold
 * stay (the owner revokes those on the connected-applications page, docs/oauth.md).
 */
for (const dialect of DIALECTS) {
  describe(`a password change ends sign-in sessions (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let client: { clientId: string; clientSecret: string };
    before(async () => {
      t = await createTestApp(dialect);
      t.config.rateLimitAuth = 0;
      a = await createTenant(t);
      client = await createOAuthClient(t.database, { redirectUris: [CB] });
    });
    after(() => t?.close());

    // prompt=consent: the page itself, though the owner's consent is remembered after the first.
    const consentUrl = () =>
      codeUrl({ response_type: 'code', scope: 'default', client_id: client.clientId, prompt: 'consent' });
    /** A signed-in browser for `who`, and an app's access token obtained through it. */
    async function signedIn(who: { login: string; password: string }) {
      const browser = injectBrowser(t.app);
      const { code } = await authorizeWithInject(browser, { client_id: client.clientId }, who);
      const res = await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code: code!,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      assert.equal(res.status, 200);
      // The session works: straight to consent, no login form.
      const page = await browser.request('GET', consentUrl());
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, /name="password"/);
      assert.match(page.body, /name="decision"/);
      return { browser, accessToken: res.body.access_token as string };
    }
    const showsLogin = async (browser: ReturnType<typeof injectBrowser>) => {
      const page = await browser.request('GET', consentUrl());
      assert.equal(page.statusCode, 200);
      return /name="password"/.test(page.body);
    };
    const userWithLogin = async (name: string) => {
      const login = `${name}-${dialect}-${Date.now()}`;
      const password = 'first password 1';
      const u = await addUser(t, a, 'employee', { login, newPassword: password, newPasswordConfirm: password });
      return { ...u, login, password };
    };

    test('PATCH /users newPassword: the session cookie is sent to the login form; the access token still works', async () => {
      const u = await userWithLogin('api');
      const other = await userWithLogin('bystander');
      const mine = await signedIn(u);
      const theirs = await signedIn(other);
      const pw = 'second password 2';
      const res = await call(t.app, u.token, 'PATCH', `/users/${u.id}`, {
        users: [{ newPassword: pw, newPasswordConfirm: pw }],
      });
      assert.equal(res.status, 200, res.raw);
      assert.ok(await showsLogin(mine.browser), 'the old session is over');
      assert.equal(
        (await call(t.app, mine.accessToken, 'GET', `/users/${u.id}`)).status,
        200,
        'the app keeps its token',
      );
      assert.ok(!(await showsLogin(theirs.browser)), "another user's session is untouched");
      // The new password signs in again.
      assert.equal(
        (await authorizeWithInject(mine.browser, { client_id: client.clientId }, { ...u, password: pw })).status,
        302,
      );
      // A PATCH without a new password ends nothing.
      const again = await signedIn({ login: u.login, password: pw });
      await call(t.app, a.token, 'PATCH', `/users/${u.id}`, { users: [{ companyName: 'Renamed' }] });
      assert.ok(!(await showsLogin(again.browser)));
    });

    test('users set-password (CLI): the same', async () => {
      const u = await userWithLogin('cli');
      const mine = await signedIn(u);
      const env = { ...process.env, DATA_DIR: t.dataDir, DATABASE_URL: t.config.databaseUrl ?? '' };
      const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [CLI, 'users', 'set-password', '--login', u.login, '--password', 'cli password 3'],
          { env },
          (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }),
        ),
      );
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(JSON.parse(out.stdout), { user: { id: u.id, login: u.login }, passwordSet: true });
      assert.ok(await showsLogin(mine.browser), 'the old session is over');
      assert.equal(
        (await call(t.app, mine.accessToken, 'GET', `/users/${u.id}`)).status,
        200,
        'the app keeps its token',
      );
    });
  });
}
