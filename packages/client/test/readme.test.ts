import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  browserSkip,
  DIALECTS,
  launchBrowser,
  ownerAllowsInChromium,
  registeredClient,
  serve,
  skipUnless,
  type Served,
} from './fixture.js';

const file = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** A port free right now, for the example's own callback server. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

test('the README example is test/example.ts, word for word', () => {
  const readme = fs.readFileSync(file('../README.md'), 'utf8');
  const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```\n/.exec(readme)?.[1];
  assert.equal(block, fs.readFileSync(file('../test/example.ts'), 'utf8'));
});

for (const dialect of DIALECTS) {
  describe(
    `client package: the README example runs as written (${dialect})`,
    { skip: skipUnless(dialect) || browserSkip() },
    () => {
      let s: Served;
      let browser: Browser;
      before(async () => {
        s = await serve(dialect);
        browser = await launchBrowser();
      });
      after(async () => {
        await browser?.close();
        await s?.close();
      });

      test('signs in through Chromium, lists the jobs changed since yesterday, creates a visit, receives its webhook, removes it', async () => {
        const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
        const { clientId, clientSecret } = await registeredClient(s, redirectUri);
        const t = s.t;
        const [recent, old] = await Promise.all(
          ['Recent job', 'Old job'].map(async (title) => {
            const res = await t.app.inject({
              method: 'POST',
              url: '/jobs',
              headers: {
                authorization: `Bearer ${s.tenant.token}`,
                'x-version': '1.0',
                'content-type': 'application/json',
              },
              payload: { jobs: [{ title }] },
            });
            return res.json().jobs[0].id as number;
          }),
        );
        await t.database.db
          .updateTable('jobs')
          .set({ modified: Date.now() - 2 * 86_400_000 })
          .where('id', '=', old)
          .execute();

        const child = spawn(process.execPath, [file('./example.js')], {
          env: {
            ...process.env,
            FSM_URL: s.base,
            CLIENT_ID: clientId,
            CLIENT_SECRET: clientSecret,
            REDIRECT_URI: redirectUri,
            WEBHOOK_PORT: '0',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stderr.on('data', (c) => (err += c));
        const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
        const signInUrl = await new Promise<string>((resolve, reject) => {
          child.stdout.on('data', (c) => {
            out += c;
            const m = /Sign in at (\S+)/.exec(out);
            if (m) resolve(m[1]);
          });
          child.on('exit', () => reject(new Error(`the example exited: ${out}${err}`)));
        });
        await ownerAllowsInChromium(browser, signInUrl, s.tenant);
        assert.equal(await exited, 0, err);

        const lines = out.trim().split('\n');
        assert.match(lines[1], new RegExp(`^job ${recent}: Recent job \\(normal\\), changed \\d{4}-`));
        assert.ok(!out.includes('Old job'), out);
        const visit = /visit (\d+) created on job (\d+)/.exec(out);
        assert.ok(visit, out);
        assert.equal(Number(visit[2]), recent);
        assert.equal(lines.at(-1), `webhook visits.created: visit ${visit[1]} (Inspection)`);
        const row = await t.database.db
          .selectFrom('visits')
          .select(['job_id', 'label'])
          .where('id', '=', Number(visit[1]))
          .executeTakeFirstOrThrow();
        assert.deepEqual(row, { job_id: recent, label: 'Inspection' });
        // It removed its webhook, and signed out: its grant is gone.
        const hooks = await t.database.db
          .selectFrom('webhooks')
          .select('id')
          .where('account_id', '=', s.tenant.accountId)
          .execute();
        assert.deepEqual(hooks, []);
        const grants = await t.database.db
          .selectFrom('oauth_tokens')
          .select('id')
          .where('client_id', '=', clientId)
          .where('revoked', '=', 0)
          .execute();
        assert.deepEqual(grants, []);
      });
    },
  );
}
