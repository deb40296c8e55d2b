import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setClientPublisher } from '../src/oauth/grants/clients.js';
import {
  codeUrl,
  createOAuthClient,
  createTenant,
  createTestApp,
  DIALECTS,
  formAction,
  injectBrowser,
  inputValue,
  authorizeWithInject,
  skipUnless,
  tokenRequest,
  type Tenant,
  type TestApp,
} from './helpers.js';
import { hashToken } from '../src/auth/secrets.js';
import { revokeTokens } from '../src/auth/tokens.js';

const unescape = (s: string) => s.replace(/&amp;/g, '&');

for (const dialect of DIALECTS) {
  describe(`consent page: who, for whom, what (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      t = await createTestApp(dialect);
      tenant = await createTenant(t);
    });
    after(() => t?.close());

    /** Signs in with a fresh browser and returns the consent page. */
    async function consent(clientId: string, extra: Record<string, string> = {}) {
      const browser = injectBrowser(t.app);
      const url = codeUrl({ response_type: 'code', scope: 'default', client_id: clientId, state: 's1', ...extra });
      const login = await browser.request('GET', url);
      const signedIn = await browser.request('POST', formAction(login.body), {
        csrf: inputValue(login.body, 'csrf'),
        login: tenant.login,
        password: tenant.password,
      });
      assert.equal(signedIn.statusCode, 303);
      const page = await browser.request('GET', signedIn.headers.location as string);
      assert.equal(page.statusCode, 200);
      return { browser, page: page.body, url };
    }

    test('shows the owner, the client and its publisher, and each permission in words beside its name, by collection', async () => {
      const { clientId } = await createOAuthClient(t.database, {
        name: 'Dispatch <Pro>',
        permissions: ['users.read', 'jobs.read', 'jobs.write'],
        allowPermissionChoice: true,
      });
      await setClientPublisher(t.database.db, clientId, 'Acme & Sons Ltd');
      const { page } = await consent(clientId);
      assert.match(
        page,
        /Signed in as <strong>Ada Admin<\/strong> \(admin[^)]*\)\. <a href="\/oauth2\/signout\?[^"]*">Not you\?<\/a>/,
      );
      assert.ok(page.includes('<strong>Dispatch &lt;Pro&gt;</strong> is run by <strong>Acme &amp; Sons Ltd</strong>'));
      assert.ok(page.includes('<fieldset><legend>Users</legend>'));
      assert.ok(page.includes('<fieldset><legend>Jobs</legend>'));
      assert.ok(page.indexOf('<legend>Users</legend>') < page.indexOf('<legend>Jobs</legend>'));
      for (const [words, name] of [
        ['Read users', 'users.read'],
        ['Read jobs', 'jobs.read'],
        ['Change jobs', 'jobs.write'],
      ]) {
        assert.ok(page.includes(`<span class="words">${words}</span> <code>${name}</code>`), `${words} ${name}`);
        assert.ok(page.includes(`name="permissions" value="${name}" checked`));
      }
      // The black-box form: one form, its fields as PRODUCT §1 names them.
      assert.equal(page.match(/<form/g)?.length, 1);
      assert.match(page, /<input type="checkbox" id="reauthenticate" name="reauthenticate"/);
      assert.match(page, /<button type="submit" name="decision" value="allow">/);
      assert.match(page, /<button type="submit" name="decision" value="deny"/);
    });

    test('a client without a publisher says so; without choice the permissions are a list', async () => {
      const { clientId } = await createOAuthClient(t.database, { name: 'Plain', permissions: ['visits.read'] });
      const { page } = await consent(clientId);
      assert.ok(page.includes('Who runs <strong>Plain</strong> is not stated'));
      assert.ok(
        page.includes(
          '<fieldset><legend>Visits</legend><ul><li><span class="words">Read visits</span> <code>visits.read</code>',
        ),
      );
      assert.ok(!page.includes('name="permissions"'));
    });

    test('"Not you?" signs out and goes back to the login form with the same request; a forged link does nothing', async () => {
      const { clientId } = await createOAuthClient(t.database, { name: 'Switcher' });
      const { browser, page, url } = await consent(clientId, { prompt: 'consent' });
      const link = unescape(/<a href="([^"]*)">Not you\?<\/a>/.exec(page)![1]);
      assert.ok(!link.includes(inputValue(page, 'csrf')), 'the form token stays out of URLs');

      // Without the session's token (a link planted on another site), the owner stays signed in.
      const forged = new URL(link, 'http://x');
      forged.searchParams.set('signout', 'not-the-token');
      const kept = await browser.request('GET', `${forged.pathname}${forged.search}`);
      assert.equal(kept.statusCode, 303);
      assert.ok((await browser.request('GET', url)).body.includes('Not you?'));

      const sessions = async () =>
        (await t.database.db.selectFrom('auth_sessions').select('id').where('user_id', '=', tenant.adminId).execute())
          .length;
      const before = await sessions();
      const out = await browser.request('GET', link);
      assert.equal(out.statusCode, 303);
      const back = new URL(out.headers.location as string, 'http://x');
      assert.equal(back.pathname, '/oauth2/code');
      assert.equal(back.searchParams.get('client_id'), clientId);
      assert.equal(back.searchParams.get('state'), 's1');
      assert.equal(back.searchParams.get('signout'), null);
      assert.equal(back.searchParams.get('prompt'), null);
      assert.match(String(out.headers['set-cookie']), /fsm_session=;/);
      const login = await browser.request('GET', out.headers.location as string);
      assert.ok(login.body.includes('name="password"'), 'the login form again');
      // The session itself is gone, not only the cookie.
      assert.equal(await sessions(), before - 1);
    });

    describe('remembered consent', () => {
      const owner = () => ({ login: tenant.login, password: tenant.password });
      const codeRow = (code: string) =>
        t.database.db
          .selectFrom('oauth_codes')
          .select(['permissions', 'offline'])
          .where('code_hash', '=', hashToken(code))
          .executeTakeFirstOrThrow();

      test('allowed once: the next authorization (a fresh sign-in too) answers with a code at once, with the permissions kept and access_type honoured', async () => {
        const { clientId } = await createOAuthClient(t.database, {
          permissions: ['users.read', 'jobs.read', 'jobs.write'],
          allowPermissionChoice: true,
        });
        const first = await authorizeWithInject(injectBrowser(t.app), { client_id: clientId }, owner(), {
          decision: 'allow',
          permissions: ['jobs.read', 'jobs.write'],
        });
        assert.ok(first.code);
        const browser = injectBrowser(t.app);
        const again = await authorizeWithInject(
          browser,
          { client_id: clientId, state: 'x2', access_type: 'offline' },
          owner(),
        );
        assert.equal(again.skipped, true);
        assert.equal(again.location.searchParams.get('state'), 'x2');
        const row = await codeRow(again.code!);
        assert.deepEqual(JSON.parse(row.permissions), ['jobs.read', 'jobs.write']);
        assert.equal(row.offline, 1);
        // prompt=none gets a code too, now that no page is needed; prompt=consent shows the page.
        const none = await browser.request(
          'GET',
          codeUrl({ response_type: 'code', scope: 'default', client_id: clientId, prompt: 'none' }),
        );
        assert.equal(none.statusCode, 302);
        assert.ok(new URL(none.headers.location as string).searchParams.get('code'));
        const shown = await browser.request(
          'GET',
          codeUrl({ response_type: 'code', scope: 'default', client_id: clientId, prompt: 'consent' }),
        );
        assert.equal(shown.statusCode, 200);
        assert.match(shown.body, /name="decision" value="allow"/);
      });

      test('asked again when the client asks other permissions, or loses the choice the owner used', async () => {
        const { clientId } = await createOAuthClient(t.database, {
          permissions: ['users.read', 'jobs.read'],
          allowPermissionChoice: true,
        });
        const browser = injectBrowser(t.app);
        await authorizeWithInject(browser, { client_id: clientId }, owner(), {
          decision: 'allow',
          permissions: ['jobs.read'],
        });
        assert.equal((await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped, true);
        const set = (v: Record<string, string | number>) =>
          t.database.db.updateTable('oauth_clients').set(v).where('client_id', '=', clientId).execute();
        await set({ permissions: JSON.stringify(['users.read', 'jobs.read', 'jobs.write']) });
        assert.equal(
          (
            await authorizeWithInject(browser, { client_id: clientId }, owner(), {
              decision: 'allow',
              permissions: ['jobs.read'],
            })
          ).skipped,
          false,
        );
        assert.equal((await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped, true);
        // Without choice the client needs all it asks: the owner's partial consent does not cover it.
        await set({ allow_permission_choice: 0 });
        assert.equal((await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped, false);
        assert.equal((await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped, true);
      });

      test('reauthenticate and Deny are not remembered; /oauth2/revoke forgets the consent', async () => {
        const { clientId, clientSecret } = await createOAuthClient(t.database, { permissions: ['visits.read'] });
        const browser = injectBrowser(t.app);
        const re = await authorizeWithInject(browser, { client_id: clientId, access_type: 'offline' }, owner(), {
          decision: 'allow',
          reauthenticate: '1',
        });
        assert.equal((await codeRow(re.code!)).offline, 0);
        const next = await authorizeWithInject(browser, { client_id: clientId, access_type: 'offline' }, owner());
        assert.equal(next.skipped, false, 'reauthenticate: asked again');
        assert.equal((await codeRow(next.code!)).offline, 1);
        assert.equal((await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped, true);
        const denied = await authorizeWithInject(browser, { client_id: clientId }, owner(), { decision: 'deny' });
        assert.equal(denied.location.searchParams.get('error'), 'access_denied');
        assert.equal(
          (await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped,
          false,
          'after Deny',
        );

        const { code } = await authorizeWithInject(browser, { client_id: clientId }, owner());
        const tokens = await tokenRequest(t.app, {
          grant_type: 'authorization_code',
          code: code!,
          client_id: clientId,
          client_secret: clientSecret,
        });
        assert.equal(tokens.status, 200);
        const revoked = await tokenRequest(
          t.app,
          { token: tokens.body.access_token, client_id: clientId, client_secret: clientSecret },
          {},
          '/oauth2/revoke',
        );
        assert.equal(revoked.status, 200);
        assert.equal(
          (await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped,
          false,
          'after /oauth2/revoke',
        );

        // A user-wide or client-wide revocation (a deleted user, a revoked client) forgets it as well.
        assert.equal((await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped, true);
        await revokeTokens(t.database.db, { accountId: tenant.accountId, userId: tenant.adminId });
        assert.equal(
          (await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped,
          false,
          'user-wide',
        );
        await revokeTokens(t.database.db, { clientId });
        assert.equal(
          (await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped,
          false,
          'client-wide',
        );
        // A grant's own revocation (replayed code, refresh grant) leaves it remembered.
        await revokeTokens(t.database.db, { accountId: tenant.accountId, codeId: 1 });
        assert.equal((await authorizeWithInject(browser, { client_id: clientId }, owner())).skipped, true, 'one grant');
      });
    });
  });
}
