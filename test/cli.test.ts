import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../src/app.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { hashToken, verifyPassword } from '../src/auth/secrets.js';
import { signIn } from '../src/oauth/pages/sign-in.js';
import { MAX_FAILURES, recordFailure } from '../src/oauth/pages/throttle.js';
import { issueToken } from '../src/auth/tokens.js';
import {
  authorizeWithInject,
  call,
  createTestDb,
  DIALECTS,
  injectBrowser,
  skipUnless,
  tokenRequest,
  type TestDb,
} from './helpers.js';

const CLI = 'dist/src/cli/index.js';

for (const dialect of DIALECTS) {
  describe(`admin CLI (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let db: TestDb;

    /** Runs the CLI as an operator would, on the test's storage. */
    const fsm = (...args: string[]) => fsmWith({}, ...args);
    const fsmWith = (extra: Record<string, string>, ...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string; json: any }>((resolve) => {
        const env = { ...process.env, DATA_DIR: db.dataDir, DATABASE_URL: db.config.databaseUrl ?? '', ...extra };
        execFile(process.execPath, [CLI, ...args], { env }, (err, stdout, stderr) => {
          let json;
          try {
            json = JSON.parse(stdout);
          } catch {
            json = undefined;
          }
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
        });
      });
    const fails = (r: { code: number; stdout: string; stderr: string }, message: RegExp) => {
      assert.notEqual(r.code, 0);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    };
    const account = [
      'accounts',
      'create',
      '--company-name',
      'Acme Ltd',
      '--first-name',
      'Ada',
      '--last-name',
      'Lovelace',
      '--mobile',
      '+447700900123',
    ];

    before(async () => {
      db = await createTestDb(dialect);
    });
    after(() => db?.close());

    test('accounts create prints the account and its Administrator; inputs are validated', async () => {
      const r = await fsm(...account, '--login', 'ada', '--password', 'correct horse', '--email', 'ada@example.com');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(Object.keys(r.json), ['account', 'user']);
      assert.deepEqual(r.json, { account: { id: r.json.account.id }, user: { id: r.json.user.id, login: 'ada' } });
      const role = await db.database.db
        .selectFrom('users as u')
        .innerJoin('roles as r', 'r.id', 'u.role_id')
        .select(['r.kind', 'u.password_hash', 'u.email'])
        .where('u.id', '=', r.json.user.id)
        .executeTakeFirstOrThrow();
      assert.equal(role.kind, 'administrator');
      assert.equal(role.email, 'ada@example.com');
      assert.match(role.password_hash!, /^scrypt\$/);

      fails(await fsm(...account, '--login', 'ada', '--password', 'correct horse'), /already in use/);
      fails(
        await fsm(
          ...account.map((a) => (a === '+447700900123' ? '07700900123' : a)),
          '--login',
          'x1',
          '--password',
          'correct horse',
        ),
        /--mobile/,
      );
      fails(await fsm(...account, '--login', 'x2', '--password', 'short'), /--password/);
      fails(
        await fsm(...account, '--login', 'x3', '--password', 'correct horse', '--email', 'not-an-email'),
        /--email/,
      );
      fails(await fsm('accounts', 'create', '--login', 'x4', '--password', 'correct horse'), /missing --company-name/);
      fails(await fsm(...account, '--login', 'x5', '--password', 'correct horse', '--bogus', '1'), /bogus/);
      fails(await fsm('nothing'), /usage/);
    });

    test('clients create: secret shown once and stored hashed; permissions and redirect URIs validated', async () => {
      const r = await fsm(
        'clients',
        'create',
        '--name',
        'Dispatch',
        '--redirect-uri',
        'https://app.example/cb',
        '--redirect-uri',
        'http://127.0.0.1:8000/cb',
      );
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(Object.keys(r.json), ['clientId', 'clientSecret', 'certified']);
      assert.equal(r.json.certified, false);
      const row = await db.database.db
        .selectFrom('oauth_clients')
        .selectAll()
        .where('client_id', '=', r.json.clientId)
        .executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, hashToken(r.json.clientSecret));
      assert.ok(!JSON.stringify(row).includes(r.json.clientSecret));
      assert.deepEqual(JSON.parse(row.permissions), ALL_PERMISSIONS);
      assert.deepEqual(JSON.parse(row.redirect_uris), ['https://app.example/cb', 'http://127.0.0.1:8000/cb']);
      assert.equal(row.allow_permission_choice, 0);

      const some = await fsm(
        'clients',
        'create',
        '--name',
        'Reader',
        '--redirect-uri',
        'http://localhost:3000/cb',
        '--permissions',
        'users.read,jobs.read',
        '--allow-permission-choice',
      );
      const row2 = await db.database.db
        .selectFrom('oauth_clients')
        .selectAll()
        .where('client_id', '=', some.json.clientId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row2.permissions), ['users.read', 'jobs.read']);
      assert.equal(row2.allow_permission_choice, 1);

      fails(
        await fsm(
          'clients',
          'create',
          '--name',
          'X',
          '--redirect-uri',
          'https://a.example/cb',
          '--permissions',
          'users.read,users.admin',
        ),
        /unknown permission 'users.admin'/,
      );
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
        const code = async () =>
          (
            await authorizeWithInject(
              browser,
              { client_id: clientId },
              { login: 'owner2', password: 'a long password' },
            )
          ).code!;
        const browser = injectBrowser(app);
        const redeem = async () =>
          tokenRequest(app, {
            grant_type: 'authorization_code',
            code: await code(),
            client_id: clientId,
            client_secret: clientSecret,
          });
        // Uncertified: sent back to the client before any page (PRODUCT §2).
        const refused = await browser.request(
          'GET',
          `/oauth2/code?response_type=code&scope=default&client_id=${clientId}`,
        );
        assert.equal(new URL(String(refused.headers.location)).searchParams.get('error'), 'unauthorized_client');

        const cert = await fsm('clients', 'certify', clientId);
        assert.deepEqual(cert.json, { clientId, certified: true });
        const ok = await redeem();
        assert.equal(ok.status, 200);
        assert.equal((await call(app, ok.body.access_token, 'GET', '/users')).status, 200);
        fails(await fsm('clients', 'certify', 'no-such-client'), /no client/);
        fails(await fsm('clients', 'certify'), /CLIENT_ID/);

        const other = await issueToken(
          db.database.db,
          'access',
          { clientId, userId: acct.json.user.id, accountId: acct.json.account.id, permissions: ['users.read'] },
          Date.now(),
        );
        const revoked = await fsm('clients', 'revoke', clientId);
        assert.equal(revoked.code, 0, revoked.stderr);
        assert.equal((await call(app, ok.body.access_token, 'GET', '/users')).status, 401);
        const stored = await db.database.db
          .selectFrom('oauth_tokens')
          .select('revoked')
          .where('id', '=', other.id)
          .executeTakeFirstOrThrow();
        assert.equal(stored.revoked, 1);
        const list = await fsm('clients', 'list');
        assert.equal(list.json.find((c: { clientId: string }) => c.clientId === clientId).revoked, true);
      } finally {
        await app.close();
      }
    });
    test('--help for the tool, a group and each command; usage errors exit 2 with the reason on stderr', async () => {
      const all = await fsm('--help');
      assert.equal(all.code, 0);
      assert.equal(all.stderr, '');
      for (const c of [
        'accounts create',
        'accounts list',
        'users create',
        'users set-password',
        'clients create',
        'clients list',
        'clients certify',
        'clients revoke',
        'clients rotate-secret',
        'tokens revoke',
        'events purge',
        'doctor',
      ]) {
        assert.ok(all.stdout.includes(c), `--help lists ${c}`);
        const one = await fsm(...c.split(' '), '--help');
        assert.equal(one.code, 0, `${c} --help: ${one.stderr}`);
        assert.match(one.stdout, new RegExp(`^usage: npm run --silent fsm -- ${c}`));
      }
      assert.match(
        (await fsm('users', 'create', '--help')).stdout,
        /--role ROLE +administrator, employee \(default\) or contractor/,
      );
      assert.match((await fsm('clients', '--help')).stdout, /clients rotate-secret CLIENT_ID/);
      const usage = await fsm('users', 'create', '--first-name', 'A');
      assert.equal(usage.code, 2);
      fails(usage, /missing --account, --last-name, --mobile/);
      fails(
        await fsm(
          'users',
          'create',
          '--account',
          'x',
          '--first-name',
          'A',
          '--last-name',
          'B',
          '--mobile',
          '+447700900123',
        ),
        /--account must be a positive integer/,
      );
      fails(await fsm('clients', 'rotate-secret'), /CLIENT_ID/);
      fails(await fsm('tokens', 'revoke'), /exactly one of --user and --client/);
      fails(await fsm('accounts', 'list', 'extra'), /unexpected argument 'extra'/);
      fails(await fsm('users', 'frobnicate'), /unknown command 'users frobnicate'\nusage:/);
    });

    test('users create --custom-field: a required custom field of users blocks it until given, checked as the API checks it', async () => {
      const acct = await fsm(...account, '--login', 'customs', '--password', 'correct horse');
      assert.equal(acct.code, 0, acct.stderr);
      const accountId = acct.json.account.id as number;
      const client = await fsm('clients', 'create', '--name', 'Custom', '--redirect-uri', 'http://127.0.0.1:9000/cb');
      const grant = {
        clientId: client.json.clientId as string,
        userId: acct.json.user.id as number,
        accountId,
        permissions: [...ALL_PERMISSIONS],
      };
      const { token } = await issueToken(db.database.db, 'access', grant, Date.now());
      const app = await buildApp({ config: { ...db.config, rateLimitAuth: 0 }, database: db.database });
      try {
        const defined = await call(app, token, 'POST', '/customFieldDefinitions', {
          customFieldDefinitions: [
            { collection: 'users', key: 'badge', label: 'Badge', type: 'number', required: true },
            { collection: 'users', key: 'van', label: 'Van', type: 'text' },
            { collection: 'users', key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] },
          ],
        });
        assert.equal(defined.status, 200, defined.raw);
        const base = ['users', 'create', '--account', String(accountId), '--first-name', 'Cus', '--last-name', 'Tom'];
        // Without it: the API's failure, naming the field by the flag that gives it.
        const without = await fsm(...base, '--mobile', '+447700900601');
        assert.equal(without.code, 1);
        fails(without, /--custom-field badge: The field 'customFields\.badge' is required/);
        // Its type and rules are the definition's: text for a number, an unknown key, an option not listed.
        fails(
          await fsm(...base, '--mobile', '+447700900601', '--custom-field', 'badge=seven'),
          /--custom-field badge: The field 'customFields\.badge' is invalid/,
        );
        fails(
          await fsm(...base, '--mobile', '+447700900601', '--custom-field', 'badge=7', '--custom-field', 'nope=1'),
          /--custom-field nope: /,
        );
        fails(
          await fsm(...base, '--mobile', '+447700900601', '--custom-field', 'badge=7', '--custom-field', 'tier=bronze'),
          /--custom-field tier: .*"gold", "silver"/,
        );
        const usage = await fsm(...base, '--mobile', '+447700900601', '--custom-field', 'badge');
        assert.equal(usage.code, 2);
        fails(usage, /--custom-field must be KEY=VALUE/);
        fails(
          await fsm(...base, '--mobile', '+447700900601', '--custom-field', 'badge=1', '--custom-field', 'badge=2'),
          /--custom-field badge is given twice/,
        );
        // With it: VALUE as JSON when it parses (7), else as text (Van 12 = A); read back through the API.
        const made = await fsm(
          ...base,
          '--mobile',
          '+447700900601',
          '--custom-field',
          'badge=7',
          '--custom-field',
          'van=Van 12 = A',
          '--custom-field',
          'tier="gold"',
        );
        assert.equal(made.code, 0, made.stderr);
        const read = await call(app, token, 'GET', `/users/${made.json.user.id}`);
        assert.equal(read.status, 200, read.raw);
        assert.deepEqual(read.body.users[0].customFields, { badge: 7, tier: 'gold', van: 'Van 12 = A' });
        const users = await db.database.db
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        assert.equal(Number(users.n), 2);
      } finally {
        await app.close();
      }
      assert.match(
        (await fsm('users', 'create', '--help')).stdout,
        /--custom-field KEY=VALUE +a custom field of users/,
      );
    });

    test('accounts list; users create through the API rules; users set-password lifts a lock', async () => {
      const acct = await fsm(...account, '--login', 'lister', '--password', 'correct horse');
      const accountId = acct.json.account.id as number;
      const list = await fsm('accounts', 'list');
      assert.equal(list.code, 0, list.stderr);
      assert.deepEqual(
        list.json.find((a: { id: number }) => a.id === accountId),
        {
          id: accountId,
          companyName: 'Acme Ltd',
          users: 1,
          created: list.json.find((a: { id: number }) => a.id === accountId).created,
        },
      );

      const made = await fsm(
        'users',
        'create',
        '--account',
        String(accountId),
        '--first-name',
        'Carl',
        '--last-name',
        'Crew',
        '--mobile',
        '+447700900555',
        '--login',
        'carl',
        '--password',
        'ten chars!',
        '--role',
        'contractor',
        '--email',
        'carl@example.com',
      );
      assert.equal(made.code, 0, made.stderr);
      assert.deepEqual(made.json, { user: { id: made.json.user.id, login: 'carl', role: 'contractor' } });
      const row = await db.database.db
        .selectFrom('users as u')
        .innerJoin('roles as r', 'r.id', 'u.role_id')
        .select(['r.kind', 'u.account_id', 'u.email', 'u.password_hash', 'u.first_name'])
        .where('u.id', '=', made.json.user.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        { ...row, password_hash: undefined },
        {
          kind: 'contractor',
          account_id: accountId,
          email: 'carl@example.com',
          password_hash: undefined,
          first_name: 'Carl',
        },
      );
      assert.ok(await verifyPassword('ten chars!', row.password_hash));
      const plain = await fsm(
        'users',
        'create',
        '--account',
        String(accountId),
        '--first-name',
        'Dee',
        '--last-name',
        'Desk',
        '--mobile',
        '+447700900556',
      );
      assert.deepEqual(plain.json, { user: { id: plain.json.user.id, login: null, role: 'employee' } });
      assert.equal((await fsm('accounts', 'list')).json.find((a: { id: number }) => a.id === accountId).users, 3);

      // The API's own checks and messages, with the operator's flag names.
      const base = ['users', 'create', '--account', String(accountId), '--first-name', 'E', '--last-name', 'F'];
      fails(await fsm(...base, '--mobile', '07700'), /--mobile: The field 'mobile' is invalid/);
      fails(
        await fsm(...base, '--mobile', '+447700900557', '--login', 'carl', '--password', 'long enough'),
        /--login: The value of 'login' is already in use/,
      );
      fails(
        await fsm(...base, '--mobile', '+447700900557', '--login', 'eve', '--password', 'short'),
        /--password: The field 'newPassword' is invalid/,
      );
      fails(
        await fsm(...base, '--mobile', '+447700900557', '--email', 'nope'),
        /--email: The field 'email' is invalid/,
      );
      fails(await fsm(...base, '--mobile', '+447700900557', '--login', 'eve'), /--login and --password go together/);
      fails(
        await fsm(...base, '--mobile', '+447700900557', '--role', 'boss'),
        /--role must be one of administrator, employee, contractor/,
      );
      fails(
        await fsm(
          'users',
          'create',
          '--account',
          '999999',
          '--first-name',
          'E',
          '--last-name',
          'F',
          '--mobile',
          '+447700900557',
        ),
        /no account 999999/,
      );
      const count = await db.database.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 3);

      // A locked-out user gets a new password from the operator and can sign in at once.
      for (let i = 0; i < MAX_FAILURES; i++) await recordFailure(db.database.db, 'carl', Date.now() - 1000);
      assert.deepEqual(await signIn(db.database.db, 'carl', 'ten chars!', Date.now()), { ok: false, reason: 'locked' });
      const set = await fsm('users', 'set-password', '--login', 'carl', '--password', 'a brand new one');
      assert.equal(set.code, 0, set.stderr);
      assert.deepEqual(set.json, { user: { id: made.json.user.id, login: 'carl' }, passwordSet: true });
      assert.equal((await signIn(db.database.db, 'carl', 'a brand new one', Date.now())).ok, true);
      assert.equal(
        (await fsm('users', 'set-password', '--user', String(made.json.user.id), '--password', 'and another one')).code,
        0,
      );
      assert.equal((await signIn(db.database.db, 'carl', 'and another one', Date.now())).ok, true);
      fails(
        await fsm('users', 'set-password', '--login', 'carl', '--password', 'short'),
        /--password: The field 'newPassword' is invalid/,
      );
      fails(
        await fsm('users', 'set-password', '--login', 'nobody-here', '--password', 'long enough pw'),
        /no user with the login 'nobody-here'/,
      );
      fails(
        await fsm('users', 'set-password', '--user', String(plain.json.user.id), '--password', 'long enough pw'),
        /has no login/,
      );
      fails(
        await fsm('users', 'set-password', '--login', 'carl', '--user', '1', '--password', 'long enough pw'),
        /exactly one of --login and --user/,
      );
    });

    test('clients create --publisher, rotate-secret (shown once, the old one stops working), tokens revoke', async () => {
      const acct = await fsm(...account, '--login', 'rotor', '--password', 'correct horse');
      const made = await fsm(
        'clients',
        'create',
        '--name',
        'Rota',
        '--redirect-uri',
        'http://127.0.0.1:9/cb',
        '--publisher',
        'Rota Software Ltd',
      );
      assert.deepEqual(Object.keys(made.json), ['clientId', 'clientSecret', 'certified']);
      const { clientId, clientSecret } = made.json;
      assert.equal(
        (await fsm('clients', 'list')).json.find((c: { clientId: string }) => c.clientId === clientId).publisher,
        'Rota Software Ltd',
      );
      fails(
        await fsm('clients', 'create', '--name', 'X', '--redirect-uri', 'http://127.0.0.1:9/cb', '--publisher', ' '),
        /--publisher/,
      );
      await fsm('clients', 'certify', clientId);

      const rotated = await fsm('clients', 'rotate-secret', clientId);
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.deepEqual(Object.keys(rotated.json), ['clientId', 'clientSecret']);
      assert.notEqual(rotated.json.clientSecret, clientSecret);
      const row = await db.database.db
        .selectFrom('oauth_clients')
        .select('secret_hash')
        .where('client_id', '=', clientId)
        .executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, hashToken(rotated.json.clientSecret));
      assert.ok(!(await fsm('clients', 'list')).stdout.includes(rotated.json.clientSecret));
      const app = await buildApp({ config: { ...db.config, rateLimitAuth: 0 }, database: db.database });
      try {
        const form = (secret: string) => ({
          grant_type: 'refresh_token',
          refresh_token: 'x',
          client_id: clientId,
          client_secret: secret,
        });
        assert.equal((await tokenRequest(app, form(clientSecret))).body.error, 'invalid_client');
        assert.equal((await tokenRequest(app, form(rotated.json.clientSecret))).body.error, 'invalid_grant');
      } finally {
        await app.close();
      }
      fails(await fsm('clients', 'rotate-secret', 'no-such-client'), /no client 'no-such-client'/);

      const user = acct.json.user.id as number;
      const grant = { clientId, userId: user, accountId: acct.json.account.id, permissions: ['users.read'] };
      const t1 = await issueToken(db.database.db, 'access', grant, Date.now());
      const t2 = await issueToken(db.database.db, 'refresh', grant, Date.now());
      const byUser = await fsm('tokens', 'revoke', '--user', String(user));
      assert.deepEqual(byUser.json, { revoked: 2 });
      const states = await db.database.db
        .selectFrom('oauth_tokens')
        .select('revoked')
        .where('id', 'in', [t1.id, t2.id])
        .execute();
      assert.deepEqual(
        states.map((s) => s.revoked),
        [1, 1],
      );
      await issueToken(db.database.db, 'access', grant, Date.now());
      assert.deepEqual((await fsm('tokens', 'revoke', '--client', clientId)).json, { revoked: 1 });
      assert.deepEqual((await fsm('tokens', 'revoke', '--client', clientId)).json, { revoked: 0 });
      fails(await fsm('tokens', 'revoke', '--user', '99999999'), /no user 99999999/);
      fails(await fsm('tokens', 'revoke', '--client', 'nope'), /no client 'nope'/);
    });

    test('events purge: events and finished deliveries older than EVENTS_RETENTION_DAYS go, the rest stay', async () => {
      const acct = await fsm(...account, '--login', 'purger', '--password', 'correct horse');
      const accountId = acct.json.account.id as number;
      const dbx = db.database.db;
      const day = 24 * 3600 * 1000;
      const now = Date.now();
      const event = (occurred: number) => ({
        account_id: accountId,
        type: 'clients.created',
        collection: 'clients',
        item_id: 1,
        changes: null,
        data: '{}',
        actor_id: null,
        client_id: null,
        occurred,
      });
      const ids = (
        await dbx
          .insertInto('events')
          .values([event(now - 40 * day), event(now - 10 * day)])
          .returning('id')
          .execute()
      ).map((r) => r.id);
      const kept = await dbx
        .selectFrom('events')
        .select('id')
        .where('account_id', '=', accountId)
        .where('id', 'not in', ids)
        .execute();
      assert.ok(kept.length > 0, 'the account and its seeds recorded events just now');
      assert.deepEqual((await fsm('events', 'purge')).json, { purged: 1, deliveries: 0 });
      assert.deepEqual((await fsmWith({ EVENTS_RETENTION_DAYS: '5' }, 'events', 'purge')).json, {
        purged: 1,
        deliveries: 0,
      });
      const left = await dbx.selectFrom('events').select('id').where('account_id', '=', accountId).execute();
      assert.deepEqual(left.map((r) => r.id).sort(), kept.map((r) => r.id).sort());
      fails(
        await fsmWith({ EVENTS_RETENTION_DAYS: 'soon' }, 'events', 'purge'),
        /EVENTS_RETENTION_DAYS must be an integer/,
      );
    });

    test('doctor: all well on this storage; a bad setting, an unreachable Redis, wrong TLS files are said in words', async () => {
      const ok = await fsm('doctor');
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.json.ok, true);
      assert.deepEqual(
        ok.json.checks.map((c: { check: string }) => c.check),
        ['configuration', 'database', 'files'],
      );
      assert.match(ok.json.checks[1].message, /answers; schema up to date/);

      const badPort = await fsmWith({ PORT: 'eighty' }, 'doctor');
      assert.equal(badPort.code, 1);
      assert.deepEqual(badPort.json.checks, [
        { check: 'configuration', ok: false, message: 'PORT must be an integer between 0 and 65535' },
      ]);
      assert.match(badPort.stderr, /doctor: configuration: PORT must be an integer/);

      const redis = await fsmWith({ REDIS_URL: 'redis://127.0.0.1:1' }, 'doctor');
      assert.equal(redis.code, 1);
      assert.match(redis.stderr, /doctor: redis: Redis at 127.0.0.1:1: nothing accepts connections/);
      const redisUp = await fsmWith({ REDIS_URL: 'redis://127.0.0.1:6379' }, 'doctor');
      assert.equal(redisUp.json.checks.find((c: { check: string }) => c.check === 'redis')?.ok, true, redisUp.stdout);

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-tls-'));
      try {
        const make = (name: string, days: string) =>
          execFileSync(
            'openssl',
            [
              'req',
              '-x509',
              '-newkey',
              'rsa:2048',
              '-nodes',
              '-keyout',
              path.join(dir, `${name}.key`),
              '-out',
              path.join(dir, `${name}.crt`),
              '-days',
              days,
              '-subj',
              `/CN=${name}.example`,
            ],
            { stdio: 'ignore' },
          );
        make('a', '90');
        make('b', '90');
        const tls = (cert: string, key: string) =>
          fsmWith({ TLS_CERT_FILE: path.join(dir, cert), TLS_KEY_FILE: path.join(dir, key) }, 'doctor');
        const good = await tls('a.crt', 'a.key');
        assert.equal(good.code, 0, good.stderr);
        assert.match(
          good.json.checks.find((c: { check: string }) => c.check === 'tls').message,
          /CN=a\.example valid until .* \((89|90) days\)/,
        );
        const mismatch = await tls('a.crt', 'b.key');
        assert.equal(mismatch.code, 1);
        assert.match(mismatch.stderr, /doctor: tls: TLS_KEY_FILE is not the key of the certificate in TLS_CERT_FILE/);
        assert.match(
          (await tls('missing.crt', 'a.key')).stderr,
          /cannot read the certificate \(TLS_CERT_FILE\) .*missing\.crt: ENOENT/,
        );
        assert.match((await tls('a.key', 'a.key')).stderr, /TLS_CERT_FILE is not a PEM certificate/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
