import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type SQLite from 'better-sqlite3';
import { call, createTenant, createTestApp, DIALECTS, skipUnless, type Tenant, type TestApp } from './helpers.js';

const CLI = path.resolve('dist/src/cli/index.js');

/**
 * `fsm backup --to FILE`: SQLite's online backup of the live database, run from any directory
 * (DATA_DIR absolute) while the server writes; never over an existing file; for PostgreSQL it says
 * to run pg_dump instead.
 */
for (const dialect of DIALECTS) {
  describe(`fsm backup (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let cwd: string;
    before(async () => {
      t = await createTestApp(dialect);
      tenant = await createTenant(t);
      cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-backup-cwd-'));
    });
    after(async () => {
      await t?.close();
      fs.rmSync(cwd, { recursive: true, force: true });
    });

    /** The CLI run as an operator would from another directory: the test's storage, `cwd` elsewhere. */
    const fsm = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          DATA_DIR: t.dataDir,
          DATABASE_URL: t.config.databaseUrl ?? '',
        };
        delete env.INIT_CWD;
        execFile(process.execPath, [CLI, ...args], { env, cwd }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });

    if (dialect === 'postgres') {
      test('PostgreSQL: exits non-zero and says to run pg_dump; writes no file', async () => {
        const r = await fsm('backup', '--to', 'pg.dump');
        assert.equal(r.code, 1);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /pg_dump --format=custom "\$DATABASE_URL" > FILE/);
        assert.ok(!fs.existsSync(path.join(cwd, 'pg.dump')));
      });
      return;
    }

    test('while the server writes, from another directory: a copy that opens and holds the items', async () => {
      const names: string[] = [];
      let writing = true;
      // The app keeps creating clients on the same SQLite file while the CLI backs it up.
      const writer = (async () => {
        for (let i = 0; writing || i < 5; i++) {
          const name = `Backup client ${i}`;
          const res = await call(t.app, tenant.token, 'POST', '/clients', { clients: [{ name }] });
          assert.equal(res.status, 200, res.raw);
          names.push(name);
        }
      })();
      const r = await fsm('backup', '--to', 'copy.sqlite');
      writing = false;
      await writer;
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { backup: string; bytes: number };
      const file = path.join(fs.realpathSync(cwd), 'copy.sqlite');
      assert.equal(fs.realpathSync(out.backup), file, 'relative to the directory it was run in, printed absolute');
      assert.ok(path.isAbsolute(out.backup));
      assert.equal(out.bytes, fs.statSync(file).size);
      assert.ok(out.bytes > 0);

      // The copy opens on its own and holds every client committed before the backup began.
      const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof SQLite;
      const copy = new Driver(file, { readonly: true, fileMustExist: true });
      try {
        assert.equal(copy.pragma('integrity_check', { simple: true }) as string, 'ok');
        const kept = (
          copy.prepare('select name from clients where account_id = ? order by id').all(tenant.accountId) as {
            name: string;
          }[]
        ).map((c) => c.name);
        assert.ok(kept.length >= 1, 'at least the clients created before the backup');
        assert.deepEqual(kept, names.slice(0, kept.length), 'a prefix of what was written: one consistent moment');
        const users = copy.prepare('select count(*) as n from users where account_id = ?').get(tenant.accountId) as {
          n: number;
        };
        assert.equal(users.n, 1);
      } finally {
        copy.close();
      }
    });

    test('an existing file is never overwritten: exit 1 with a clear message, the file unchanged', async () => {
      const file = path.join(cwd, 'taken.sqlite');
      fs.writeFileSync(file, 'precious');
      const r = await fsm('backup', '--to', 'taken.sqlite');
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /taken\.sqlite already exists: give a new file name/);
      assert.equal(fs.readFileSync(file, 'utf8'), 'precious');
      const missing = await fsm('backup', '--to', path.join(cwd, 'no', 'such', 'dir.sqlite'));
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /does not exist/);
      const usage = await fsm('backup');
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /missing --to/);
    });
  });
}
