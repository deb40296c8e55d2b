import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type SQLite from 'better-sqlite3';
import { buildApp } from '../src/app.js';
import { connect, type Database } from '../src/db/index.js';
import {
  call,
  createTenant,
  createTestApp,
  DIALECTS,
  PG_URL,
  skipUnless,
  type Tenant,
  type TestApp,
} from './helpers.js';

/**
 * The backup and restore of docs/operations.md, done as written there: back up a live database,
 * restore it into a fresh one, start the app on the copy and read the data back through the API
 * (tokens included: they are rows like any other).
 */
async function backupAndRestore(t: TestApp, dir: string): Promise<{ database: Database; drop: () => Promise<void> }> {
  if (t.database.dialect.name === 'sqlite') {
    // Online backup with better-sqlite3 (the same as `sqlite3 fsm.sqlite ".backup 'backup.sqlite'"`),
    // while the app holds the database open in WAL mode.
    const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof SQLite;
    const source = new Driver(path.join(t.dataDir, 'fsm.sqlite'), { readonly: true });
    const backup = path.join(dir, 'backup.sqlite');
    try {
      await source.backup(backup);
    } finally {
      source.close();
    }
    // Restore: the backup file becomes fsm.sqlite of a fresh DATA_DIR (the server stopped).
    const restoredDir = path.join(dir, 'restored');
    fs.mkdirSync(restoredDir);
    fs.copyFileSync(backup, path.join(restoredDir, 'fsm.sqlite'));
    return {
      database: await connect({ sqliteFile: path.join(restoredDir, 'fsm.sqlite') }),
      drop: async () => {},
    };
  }
  // PostgreSQL: pg_dump's custom format, restored with pg_restore into a new, empty database.
  const dump = path.join(dir, 'fsm.dump');
  execFileSync('pg_dump', ['--format=custom', '--no-owner', '--file', dump, '--dbname', t.config.databaseUrl!]);
  const name = `fsm_restore_${crypto.randomBytes(5).toString('hex')}`;
  const admin = async (q: string) => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(q).finally(() => c.end());
  };
  await admin(`create database ${name}`);
  const url = new URL(PG_URL!);
  url.pathname = `/${name}`;
  execFileSync('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', url.toString(), dump]);
  return {
    database: await connect({ databaseUrl: url.toString() }),
    drop: () => admin(`drop database if exists ${name} with (force)`),
  };
}

for (const dialect of DIALECTS) {
  describe(`backup and restore (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let tenant: Tenant;
    let dir: string;
    before(async () => {
      t = await createTestApp(dialect);
      tenant = await createTenant(t);
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-backup-'));
    });
    after(async () => {
      await t?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test(
      'a backup of the live database, restored into a fresh one, serves the same data',
      { timeout: 60_000 },
      async () => {
        const made = await call(t.app, tenant.token, 'POST', '/jobs', {
          jobs: [{ title: 'Boiler service', priority: 'high' }, { title: 'Leak under sink' }],
        });
        assert.equal(made.status, 200);
        const read = (app: typeof t.app) =>
          Promise.all(['/jobs?fields=*', '/users?fields=*', '/statuses'].map((u) => call(app, tenant.token, 'GET', u)));
        const original = await read(t.app);

        const { database, drop } = await backupAndRestore(t, dir);
        const app = await buildApp({ config: t.config, database, clock: () => t.clock.now });
        try {
          const restored = await read(app);
          assert.deepEqual(
            restored.map((r) => r.status),
            [200, 200, 200],
          );
          assert.deepEqual(
            restored.map((r) => r.body),
            original.map((r) => r.body),
          );
          assert.deepEqual(
            restored[0].body.jobs.map((j: { title: string }) => j.title),
            ['Boiler service', 'Leak under sink'],
          );
          // The copy is a working database: it takes writes, with ids after the restored ones.
          const more = await call(app, tenant.token, 'POST', '/jobs', { jobs: [{ title: 'After restore' }] });
          assert.equal(more.status, 200, more.raw);
          assert.ok(more.body.jobs[0].id > made.body.jobs[1].id);
          assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
        } finally {
          await app.close();
          await database.close();
          await drop();
        }
      },
    );
  });
}
