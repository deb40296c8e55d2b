import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { hashToken } from '../src/auth/secrets.js';
import { issueCode } from '../src/oauth/grants/codes.js';
import { issueToken } from '../src/auth/tokens.js';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { DIALECTS, createTestDb, skipUnless } from './helpers.js';
import { request, startServer } from './reliability/process.js';

/**
 * Secrets never leak: a flow through the real server (account and client made with the CLI, a
 * code redeemed at /oauth2/token, a refresh, API calls, a password set through the API) at the
 * most verbose log level, then its logs and a dump of the whole database are searched for every
 * secret it handled. Only hashes may be stored.
 */
const CLI = new URL('../src/cli/index.js', import.meta.url).pathname;

function cli(env: Record<string, string>, args: string[]) {
  return JSON.parse(
    execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }),
  );
}

for (const dialect of DIALECTS) {
  describe(`secrets stay out of logs and storage (${dialect})`, { skip: skipUnless(dialect) }, () => {
    test(
      'passwords, client secrets, codes and tokens: not in the logs, not in a database dump',
      { timeout: 60_000 },
      async (t) => {
        const db = await createTestDb(dialect);
        const env = {
          DATA_DIR: db.dataDir,
          DATABASE_URL: db.config.databaseUrl ?? '',
          HOST: '127.0.0.1',
          PORT: '0',
          LOG_LEVEL: 'trace',
          RATE_LIMIT_API: '0',
          RATE_LIMIT_AUTH: '0',
        };
        const secrets: Record<string, string> = {};
        try {
          secrets.adminPassword = 'Sup3r-Secret-Admin-Passw0rd';
          const made = cli(env, [
            'accounts',
            'create',
            '--company-name',
            'Secretive Ltd',
            '--first-name',
            'Ada',
            '--last-name',
            'Admin',
            '--mobile',
            '+441234567890',
            '--login',
            `secret-admin-${dialect}`,
            '--password',
            secrets.adminPassword,
          ]);
          const client = cli(env, [
            'clients',
            'create',
            '--name',
            'Secret client',
            '--redirect-uri',
            'http://127.0.0.1:9000/callback',
          ]);
          cli(env, ['clients', 'certify', client.clientId]);
          secrets.clientSecret = client.clientSecret;
          const accountId = made.account.id as number;
          const userId = made.user.id as number;
          const grant = { clientId: client.clientId, userId, accountId, permissions: [...ALL_PERMISSIONS] };
          secrets.code = await issueCode(db.database.db, { ...grant, offline: true }, Date.now());
          secrets.replayedCode = await issueCode(db.database.db, { ...grant, offline: false }, Date.now());

          const server = await startServer(env);
          let notes: string[] = [];
          try {
            const form = (body: Record<string, string>, headers: Record<string, string> = {}) =>
              fetch(`${server.origin}/oauth2/token`, {
                method: 'POST',
                headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
                body: new URLSearchParams(body),
              });
            // The code grant (client secret in the body), a refresh (client secret in Basic), a replay, a bad secret.
            const tokenRes = await form({
              grant_type: 'authorization_code',
              code: secrets.code,
              client_id: client.clientId,
              client_secret: client.clientSecret,
            });
            if (tokenRes.status === 200) {
              const tokens = (await tokenRes.json()) as { access_token: string; refresh_token?: string };
              secrets.accessToken = tokens.access_token;
              if (tokens.refresh_token) {
                secrets.refreshToken = tokens.refresh_token;
                const basic = Buffer.from(
                  `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`,
                ).toString('base64');
                const refreshed = await form(
                  { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
                  { authorization: `Basic ${basic}` },
                );
                if (refreshed.status === 200)
                  secrets.refreshedAccessToken = ((await refreshed.json()) as { access_token: string }).access_token;
              }
            } else {
              notes.push(`/oauth2/token answered ${tokenRes.status}; tokens issued directly`);
              secrets.accessToken = (await issueToken(db.database.db, 'access', grant, Date.now())).token;
            }
            await form({
              grant_type: 'authorization_code',
              code: secrets.replayedCode,
              client_id: client.clientId,
              client_secret: 'wrong-secret-value',
            });
            await form({
              grant_type: 'authorization_code',
              code: secrets.replayedCode,
              client_id: client.clientId,
              client_secret: client.clientSecret,
            });
            await form({
              grant_type: 'authorization_code',
              code: secrets.replayedCode,
              client_id: client.clientId,
              client_secret: client.clientSecret,
            });
            // A sign-in attempt carrying the password (refused for want of a session and CSRF token).
            await fetch(`${server.origin}/oauth2/code`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ login: `secret-admin-${dialect}`, password: secrets.adminPassword }),
            });

            const token = secrets.accessToken;
            assert.equal((await request(server.origin, token, 'GET', '/users')).status, 200);
            // A password set through the API, and one refused (echoed failures drop write-only members).
            secrets.userPassword = 'An0ther-Secret-User-Pw';
            const created = await request(server.origin, token, 'POST', '/users', {
              users: [
                {
                  account: { id: accountId },
                  firstName: 'Bob',
                  lastName: 'Pw',
                  mobile: '+447700900123',
                  login: `secret-bob-${dialect}`,
                  newPassword: secrets.userPassword,
                  newPasswordConfirm: secrets.userPassword,
                },
              ],
            });
            assert.equal(created.status, 200, JSON.stringify(created.body));
            secrets.refusedPassword = 'Refused-Secret-Pw-123';
            const refused = await request(server.origin, token, 'POST', '/users', {
              users: [
                {
                  account: { id: accountId },
                  firstName: '',
                  mobile: 'x',
                  login: 'x y',
                  newPassword: secrets.refusedPassword,
                  newPasswordConfirm: secrets.refusedPassword,
                },
              ],
            });
            assert.equal(refused.status, 422);
            assert.ok(!JSON.stringify(refused.body).includes(secrets.refusedPassword), 'a failure echoed the password');
            // Tokens where they do not belong: in the query string, and a revoked-looking one.
            await fetch(`${server.origin}/users?access_token=${token}`, { headers: { 'x-version': '1.0' } });
            await request(server.origin, `${token}x`, 'GET', '/users');
            // A server error's log line must not carry the request either.
            await request(
              server.origin,
              token,
              'GET',
              `/users?where=${encodeURIComponent(`login = "${secrets.adminPassword}"`)}`,
            );
          } finally {
            server.child.kill('SIGTERM');
            await server.exited;
          }

          const logs = server.output();
          assert.ok(
            logs.split('\n').filter((l) => l.startsWith('{')).length > 10,
            'the server logged too little to prove anything',
          );
          for (const [name, value] of Object.entries(secrets)) {
            if (
              name === 'adminPassword' ||
              name === 'userPassword' ||
              name === 'refusedPassword' ||
              value.length >= 16
            ) {
              assert.ok(!logs.includes(value), `the ${name} appears in the logs`);
            }
          }

          // The whole database, every table, every value.
          let dump: string;
          if (dialect === 'sqlite') {
            const s = new SQLite(path.join(db.dataDir, 'fsm.sqlite'), { readonly: true });
            const tables = s.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[];
            dump = tables
              .map(
                ({ name }) =>
                  `${name}\n${(s.prepare(`select * from "${name}"`).all() as object[]).map((r) => JSON.stringify(r)).join('\n')}`,
              )
              .join('\n');
            s.close();
          } else {
            try {
              dump = execFileSync('pg_dump', ['--data-only', db.config.databaseUrl!], {
                encoding: 'utf8',
                maxBuffer: 64 * 1024 * 1024,
              });
            } catch {
              const rows = await (db.database.db as any)
                .selectFrom('information_schema.tables')
                .select('table_name')
                .where('table_schema', '=', 'public')
                .execute();
              const parts: string[] = [];

              for (const r of rows)
                parts.push(
                  JSON.stringify(await (db.database.db as any).selectFrom(r.table_name).selectAll().execute()),
                );
              dump = parts.join('\n');
              notes.push('pg_dump unavailable; tables selected instead');
            }
          }
          assert.ok(
            dump.includes(hashToken(secrets.clientSecret)),
            'the dump holds the stored hashes (so it is complete enough to search)',
          );
          for (const [name, value] of Object.entries(secrets))
            assert.ok(!dump.includes(value), `the ${name} is stored in plaintext`);
          assert.match(dump, /scrypt\$/, 'passwords are stored as scrypt hashes');
          t.diagnostic(
            `searched ${logs.length} bytes of logs and a ${dump.length}-byte dump for ${Object.keys(secrets).length} secrets (${Object.keys(secrets).join(', ')})${notes.length ? `; ${notes.join('; ')}` : ''}`,
          );
          notes = [];
        } finally {
          await db.close();
        }
      },
    );
  });
}
