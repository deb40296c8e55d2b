import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../src/app.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { hashToken } from '../src/auth/secrets.js';
import { issueToken } from '../src/oauth/tokens.js';
import { authorizeWithInject, call, createTestDb, DIALECTS, injectBrowser, skipUnless, tokenRequest, type TestDb } from './helpers.js';

const CLI = 'dist/src/cli/index.js';

for (const dialect of DIALECTS) {
  describe(`admin CLI (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let db: TestDb;

    /** Runs the CLI as an operator would, on the test's storage. */
    const fsm = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string; json: any }>((resolve) => { // eslint-disable-line @typescript-eslint/no-explicit-any
        const env = { ...process.env, DATA_DIR: db.dataDir, DATABASE_URL: db.config.databaseUrl ?? '' };
        execFile(process.execPath, [CLI, ...args], { env }, (err, stdout, stderr) => {
          let json;
          try { json = JSON.parse(stdout); } catch { json = undefined; }
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
        });
      });
    const fails = (r: { code: number; stdout: string; stderr: string }, message: RegExp) => {
      assert.notEqual(r.code, 0);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    };
    const account = ['accounts', 'create', '--company-name', 'Acme Ltd', '--first-name', 'Ada', '--last-name', 'Lovelace', '--mobile', '+447700900123'];

    before(async () => { db = await createTestDb(dialect); });
    after(() => db?.close());

    test('accounts create prints the account and its Administrator; inputs are validated', async () => {
      const r = await fsm(...account, '--login', 'ada', '--password', 'correct horse', '--email', 'ada@example.com');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(Object.keys(r.json), ['account', 'user']);
      assert.deepEqual(r.json, { account: { id: r.json.account.id }, user: { id: r.json.user.id, login: 'ada' } });
      const role = await db.database.db.selectFrom('users as u').innerJoin('roles as r', 'r.id', 'u.role_id')
        .select(['r.kind', 'u.password_hash', 'u.email']).where('u.id', '=', r.json.user.id).executeTakeFirstOrThrow();
      assert.equal(role.kind, 'administrator');
      assert.equal(role.email, 'ada@example.com');
      assert.match(role.password_hash!, /^scrypt\$/);

      fails(await fsm(...account, '--login', 'ada', '--password', 'correct horse'), /already in use/);
      fails(await fsm(...account.map((a) => (a === '+447700900123' ? '07700900123' : a)), '--login', 'x1', '--password', 'correct horse'), /--mobile/);
      fails(await fsm(...account, '--login', 'x2', '--password', 'short'), /--password/);
      fails(await fsm(...account, '--login', 'x3', '--password', 'correct horse', '--email', 'not-an-email'), /--email/);
      fails(await fsm('accounts', 'create', '--login', 'x4', '--password', 'correct horse'), /missing --company-name/);
      fails(await fsm(...account, '--login', 'x5', '--password', 'correct horse', '--bogus', '1'), /bogus/);
      fails(await fsm('nothing'), /usage/);
    });

    test('clients create: secret shown once and stored hashed; permissions and redirect URIs validated', async () => {
      const r = await fsm('clients', 'create', '--name', 'Dispatch', '--redirect-uri', 'https://app.example/cb', '--redirect-uri', 'http://127.0.0.1:8000/cb');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(Object.keys(r.json), ['clientId', 'clientSecret', 'certified']);
      assert.equal(r.json.certified, false);
      const row = await db.database.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', r.json.clientId).executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, hashToken(r.json.clientSecret));
      assert.ok(!JSON.stringify(row).includes(r.json.clientSecret));
      assert.deepEqual(JSON.parse(row.permissions), ALL_PERMISSIONS);
      assert.deepEqual(JSON.parse(row.redirect_uris), ['https://app.example/cb', 'http://127.0.0.1:8000/cb']);
      assert.equal(row.allow_permission_choice, 0);

      const some = await fsm('clients', 'create', '--name', 'Reader', '--redirect-uri', 'http://localhost:3000/cb', '--permissions', 'users.read,jobs.read', '--allow-permission-choice');
      const row2 = await db.database.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', some.json.clientId).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row2.permissions), ['users.read', 'jobs.read']);
      assert.equal(row2.allow_permission_choice, 1);

      fails(await fsm('clients', 'create', '--name', 'X', '--redirect-uri', 'https://a.example/cb', '--permissions', 'users.read,users.admin'), /unknown permission 'users.admin'/);
      fails(await fsm('clients', 'create', '--name', 'X', '--redirect-uri', 'http://app.example/cb'), /https/);
      fails(await fsm('clients', 'create', '--name', 'X', '--redirect-uri', 'https://a.example/cb#frag'), /fragment/);
      fails(await fsm('clients', 'create', '--name', 'X'), /redirect-uri/);

      const list = await fsm('clients', 'list');
      assert.equal(list.code, 0);
      assert.ok(Array.isArray(list.json));
      assert.ok(list.json.some((c: { clientId: string }) => c.clientId === r.json.clientId));
      assert.ok(!list.stdout.includes(r.json.clientSecret));
      assert.ok(!list.stdout.includes(row.secret_hash));
    });

    test('certify and revoke; a CLI-made client and account work against the server on the same storage', async () => {
      const acct = await fsm(...account, '--login', 'owner2', '--password', 'a long password');
      const made = await fsm('clients', 'create', '--name', 'Live', '--redirect-uri', 'http://127.0.0.1:9/cb');
      const { clientId, clientSecret } = made.json;
      const app = await buildApp({ config: { ...db.config, rateLimitAuth: 0 }, database: db.database });
      try {
        const code = async () => (await authorizeWithInject(browser, { client_id: clientId }, { login: 'owner2', password: 'a long password' })).code!;
        const browser = injectBrowser(app);
        const redeem = async () => tokenRequest(app, { grant_type: 'authorization_code', code: await code(), client_id: clientId, client_secret: clientSecret });
        // Uncertified: sent back to the client before any page (PRODUCT §2).
        const refused = await browser.request('GET', `/oauth2/code?response_type=code&scope=default&client_id=${clientId}`);
        assert.equal(new URL(String(refused.headers.location)).searchParams.get('error'), 'unauthorized_client');

        const cert = await fsm('clients', 'certify', clientId);
        assert.deepEqual(cert.json, { clientId, certified: true });
        const ok = await redeem();
        assert.equal(ok.status, 200);
        assert.equal((await call(app, ok.body.access_token, 'GET', '/users')).status, 200);
        fails(await fsm('clients', 'certify', 'no-such-client'), /no client/);
        fails(await fsm('clients', 'certify'), /CLIENT_ID/);

        const other = await issueToken(db.database.db, 'access', { clientId, userId: acct.json.user.id, accountId: acct.json.account.id, permissions: ['users.read'] }, Date.now());
        const revoked = await fsm('clients', 'revoke', clientId);
        assert.equal(revoked.code, 0, revoked.stderr);
        assert.equal((await call(app, ok.body.access_token, 'GET', '/users')).status, 401);
        const stored = await db.database.db.selectFrom('oauth_tokens').select('revoked').where('id', '=', other.id).executeTakeFirstOrThrow();
        assert.equal(stored.revoked, 1);
        const list = await fsm('clients', 'list');
        assert.equal(list.json.find((c: { clientId: string }) => c.clientId === clientId).revoked, true);
      } finally {
        await app.close();
      }
    });
  });
}
