import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ALL_PERMISSIONS } from '../src/collections/index.js';
import { issueToken } from '../src/auth/tokens.js';
import { DIALECTS, createClient, skipUnless } from './helpers.js';
import { createSite, startServer, type ServerProcess, type Site } from './reliability/process.js';

/**
 * Immediate revocation with the verified-token cache (src/auth/bearer.ts): two real server
 * processes on one database. A token used on process b (so b has it cached) and then made to fail
 * through process a, or through the operator CLI (a third process), fails on b's very next
 * request: b sees the account's revocation epoch move. Without the epoch check b would go on
 * answering from its cache.
 */
const CLI = path.resolve(import.meta.dirname, '../src/cli/index.js');

async function api(origin: string, token: string, method: string, url: string, body?: unknown) {
  const res = await fetch(origin + url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      'x-version': '1.0',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.json() };
}

for (const dialect of DIALECTS) {
  describe(
    `revocation reaches a process that cached the token (${dialect}, two processes)`,
    { skip: skipUnless(dialect) },
    () => {
      let site: Site;
      let a: ServerProcess;
      let b: ServerProcess;
      const issue = async (userId: number, clientId: string) =>
        (
          await issueToken(
            site.db.database.db,
            'access',
            { clientId, userId, accountId: site.accountId, permissions: [...ALL_PERMISSIONS] },
            Date.now(),
          )
        ).token;
      const adminId = async () =>
        (
          await site.db.database.db
            .selectFrom('users')
            .select('id')
            .where('account_id', '=', site.accountId)
            .orderBy('id')
            .executeTakeFirstOrThrow()
        ).id;
      /** A user of the account with the given role, and a token of theirs on a new client. */
      async function userWithToken(role: 'administrator' | 'employee') {
        const roleId = (
          await site.db.database.db
            .selectFrom('roles')
            .select('id')
            .where('account_id', '=', site.accountId)
            .where('kind', '=', role)
            .executeTakeFirstOrThrow()
        ).id;
        const created = await api(a.origin, site.token, 'POST', '/users', {
          users: [
            {
              account: { id: site.accountId },
              firstName: 'Cached',
              lastName: 'User',
              mobile: '+447700900123',
              role: { id: roleId },
            },
          ],
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const userId = created.body.users[0].id as number;
        const client = await createClient(site.db.database);
        return { userId, client, token: await issue(userId, client.clientId) };
      }
      /** Used twice on b: verified, then answered from b's cache. */
      async function cachedOnB(token: string) {
        for (let i = 0; i < 2; i++) assert.equal((await api(b.origin, token, 'GET', '/users')).status, 200);
      }
      const refusedOnB = async (token: string) => {
        const r = await api(b.origin, token, 'GET', '/users');
        assert.equal(r.status, 401, JSON.stringify(r.body));
        assert.equal(r.body.error.code, 1011);
      };
      const cli = (...args: string[]) => {
        const r = spawnSync(process.execPath, [CLI, ...args], {
          env: { ...process.env, ...site.env },
          encoding: 'utf8',
          timeout: 30_000,
        });
        assert.equal(r.status, 0, r.stderr);
      };

      before(
        async () => {
          site = await createSite(dialect);
          a = await startServer(site.env);
          b = await startServer(site.env);
        },
        { timeout: 60_000 },
      );
      after(async () => {
        for (const p of [a, b]) p?.child.kill();
        await Promise.all([a?.exited, b?.exited]);
        await site?.close();
      });

      test('a token revoked through the revocation endpoint on a', async () => {
        const { client, token } = await userWithToken('employee');
        await cachedOnB(token);
        const res = await fetch(`${a.origin}/oauth2/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            token,
            client_id: client.clientId,
            client_secret: client.clientSecret,
          }).toString(),
        });
        assert.equal(res.status, 200);
        await refusedOnB(token);
      });

      test('a token revoked with the CLI (`tokens revoke`)', async () => {
        const { userId, token } = await userWithToken('employee');
        await cachedOnB(token);
        cli('tokens', 'revoke', '--user', String(userId));
        await refusedOnB(token);
      });

      test('a user deleted through a', async () => {
        const { userId, token } = await userWithToken('employee');
        await cachedOnB(token);
        assert.equal((await api(a.origin, site.token, 'DELETE', `/users/${userId}`)).status, 200);
        await refusedOnB(token);
      });

      test("a user's role changed through a: b answers with the new role at once", async () => {
        const { userId, token } = await userWithToken('administrator');
        const other = await adminId();
        const patch = (n: number) =>
          api(b.origin, token, 'PATCH', `/users/${other}`, { users: [{ firstName: `Renamed ${n}` }] });
        assert.equal((await patch(1)).status, 200, 'an administrator edits another user');
        assert.equal((await patch(2)).status, 200);
        const employee = (
          await site.db.database.db
            .selectFrom('roles')
            .select('id')
            .where('account_id', '=', site.accountId)
            .where('kind', '=', 'employee')
            .executeTakeFirstOrThrow()
        ).id;
        assert.equal(
          (await api(a.origin, site.token, 'PATCH', `/users/${userId}`, { users: [{ role: { id: employee } }] }))
            .status,
          200,
        );
        const refused = await patch(3);
        assert.equal(refused.status, 403, JSON.stringify(refused.body));
      });

      // Every request reads the cached token's epoch first (src/auth/bearer.ts).
      test("a user's role changed through a: b's next GET is answered under the new role", async () => {
        const { userId, token } = await userWithToken('administrator');
        for (let i = 0; i < 2; i++)
          assert.equal((await api(b.origin, token, 'GET', '/webhooks')).status, 200, 'an administrator lists webhooks');
        const employee = (
          await site.db.database.db
            .selectFrom('roles')
            .select('id')
            .where('account_id', '=', site.accountId)
            .where('kind', '=', 'employee')
            .executeTakeFirstOrThrow()
        ).id;
        assert.equal(
          (await api(a.origin, site.token, 'PATCH', `/users/${userId}`, { users: [{ role: { id: employee } }] }))
            .status,
          200,
        );
        const refused = await api(b.origin, token, 'GET', '/webhooks');
        assert.equal(refused.status, 403, JSON.stringify(refused.body));
      });

      test('a revoked token gets its 401 on b even where the GET would fail otherwise (an unknown item or collection)', async () => {
        const { userId, token } = await userWithToken('employee');
        await cachedOnB(token);
        assert.equal((await api(b.origin, token, 'GET', '/jobs/2000000000')).status, 404);
        cli('tokens', 'revoke', '--user', String(userId));
        for (const url of ['/jobs/2000000000', '/nosuchcollection', '/users?where=nope%20%3D%201']) {
          const r = await api(b.origin, token, 'GET', url);
          assert.equal(r.status, 401, `${url}: ${JSON.stringify(r.body)}`);
        }
      });

      test('a write with a token revoked meanwhile is refused on b and commits nothing, valid or not', async () => {
        const { userId, token } = await userWithToken('employee');
        const name = `Written after revocation ${dialect}`;
        assert.equal(
          (await api(b.origin, token, 'POST', '/clients', { clients: [{ name: 'Written before' }] })).status,
          200,
        );
        cli('tokens', 'revoke', '--user', String(userId));
        for (const body of [{ clients: [{ name }] }, { clients: [{ name: '' }] }]) {
          const r = await api(b.origin, token, 'POST', '/clients', body);
          assert.equal(r.status, 401, JSON.stringify(r.body));
        }
        const kept = await site.db.database.db.selectFrom('clients').select('id').where('name', '=', name).execute();
        assert.equal(kept.length, 0);
      });

      test('a client revoked with the CLI (`clients revoke`)', async () => {
        const { client, token } = await userWithToken('employee');
        await cachedOnB(token);
        cli('clients', 'revoke', client.clientId);
        await refusedOnB(token);
      });
    },
  );
}
