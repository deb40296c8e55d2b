import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createTestDb, DIALECTS, skipUnless, type TestDb } from './helpers.js';

const CLI = 'dist/src/cli/index.js';

for (const dialect of DIALECTS) {
  describe(`accounts create --currency --time-zone (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let db: TestDb;
    const fsm = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string; json: any }>((resolve) => {
        const env = { ...process.env, DATA_DIR: db.dataDir, DATABASE_URL: db.config.databaseUrl ?? '' };
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
    let n = 0;
    const create = (...extra: string[]) =>
      fsm(
        'accounts',
        'create',
        '--company-name',
        'Yen Co',
        '--first-name',
        'Ada',
        '--last-name',
        'L',
        '--mobile',
        '+447700900123',
        '--login',
        `money${++n}`,
        '--password',
        'correct horse',
        ...extra,
      );
    const stored = (id: number) =>
      db.database.db
        .selectFrom('accounts')
        .select(['currency', 'time_zone'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    before(async () => {
      db = await createTestDb(dialect);
    });
    after(() => db?.close());

    test('stores the currency and time zone given, USD and UTC by default', async () => {
      const r = await create('--currency', 'JPY', '--time-zone', 'Asia/Tokyo');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await stored(r.json.account.id), { currency: 'JPY', time_zone: 'Asia/Tokyo' });
      const d = await create();
      assert.equal(d.code, 0, d.stderr);
      assert.deepEqual(await stored(d.json.account.id), { currency: 'USD', time_zone: 'UTC' });
    });

    test('refuses a code that is no active ISO 4217 currency in upper case, and an unknown zone', async () => {
      for (const bad of ['usd', 'XXX', 'US', 'USDD', 'HRK', 'XAU', '']) {
        const r = await create('--currency', bad);
        assert.notEqual(r.code, 0, bad);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, /--currency/);
      }
      for (const bad of ['Mars/Olympus', 'Europe/', '../etc/passwd', '']) {
        const r = await create('--time-zone', bad);
        assert.notEqual(r.code, 0, bad);
        assert.match(r.stderr, /--time-zone/);
      }
      const count = await db.database.db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 2); // nothing was made by the refused ones
    });
  });
}
