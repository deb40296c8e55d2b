import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from './index.js';
import { withTransaction } from './tx.js';

/**
 * The server's SQLite checkpoints run on their own thread (src/db/checkpointer.ts): its connection
 * checkpoints only past 16 MB of WAL (a safety net), yet what it commits reaches the database file
 * within moments, the WAL stays bounded under a stream of commits, and closing leaves no WAL.
 */
const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MB = 2 ** 20;

/** `read()` again every 50 ms until `done` holds of what it read (at most 100 times); what it read last. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 100 && !done(value); i++) {
    await pause(50);
    value = await read();
  }
  return value;
}

/** One 4 KB row per transaction, as a busy server commits; a moment between each 256. */
async function commit(database: Database, megabytes: number) {
  await sql`create table if not exists blobs (id integer primary key, b blob)`.execute(database.db);
  for (let i = 0; i < megabytes * 256; i++) {
    await withTransaction(database, (tx) => sql`insert into blobs (b) values (randomblob(4000))`.execute(tx));
    if (i % 256 === 255) await pause(5);
  }
}

async function inDir(fn: (dir: string) => Promise<void>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-checkpoint-'));
  try {
    await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("SQLite: the thread checkpoints what the server commits, below the connection's own threshold", () =>
  inDir(async (dir) => {
    // 4 MB (about 8 MB of WAL): under the connection's 16 MB safety net, so only the thread can
    // have copied it over.
    const file = path.join(dir, 'fsm.sqlite');
    const database = openDatabase({ sqliteFile: file, backgroundCheckpoints: true });
    await commit(database, 4);
    await pause(800);
    assert.ok(size(file) > 4 * MB, `database file ${size(file)} bytes after 4 MB committed`);
    await database.close();
    assert.equal(size(`${file}-wal`), 0, 'closing leaves everything in the database file');
    const reopened = openDatabase({ sqliteFile: file });
    const { rows } = await sql<{ n: number }>`select count(*) as n from blobs`.execute(reopened.db);
    assert.equal(Number(rows[0].n), 4 * 256);
    await reopened.close();

    // The control: the same commits with the same threshold and no thread stay in the WAL.
    const other = path.join(dir, 'control.sqlite');
    const control = openDatabase({ sqliteFile: other });
    await sql`pragma wal_autocheckpoint = 4096`.execute(control.db);
    await commit(control, 4);
    await pause(800);
    assert.ok(size(other) < MB, `control database file ${size(other)} bytes`);
    assert.ok(size(`${other}-wal`) > 4 * MB, `control WAL ${size(`${other}-wal`)} bytes`);
    await control.close();
  }));

test('SQLite: under a stream of commits without gaps the WAL stays bounded', () =>
  inDir(async (dir) => {
    const file = path.join(dir, 'fsm.sqlite');
    const database = openDatabase({ sqliteFile: file, backgroundCheckpoints: true });
    await commit(database, 48);
    // 48 MB committed, about twice that written to the WAL; it starts over instead of growing.
    assert.ok(size(`${file}-wal`) < 32 * MB, `WAL of ${size(`${file}-wal`)} bytes after 48 MB committed`);
    await database.close();
  }));

test('SQLite without the thread (the CLI): automatic checkpoints as SQLite does them', () =>
  inDir(async (dir) => {
    const database = openDatabase({ sqliteFile: path.join(dir, 'fsm.sqlite') });
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db);
    assert.equal(rows[0].wal_autocheckpoint, 1000);
    await database.close();
  }));

test("SQLite: the planner statistics follow a table that grew, and the server's statements plan again", () =>
  inDir(async (dir) => {
    const file = path.join(dir, 'fsm.sqlite');
    const database = openDatabase({ sqliteFile: file, backgroundCheckpoints: true, statisticsEveryMs: 100 });
    const db = database.db;
    try {
      await sql`create table events (id integer primary key, account_id integer, data text)`.execute(db);
      await sql`create index events_account_id on events (account_id, id)`.execute(db);
      for (let i = 0; i < 10; i++) await sql`insert into events (account_id, data) values (1, 'x')`.execute(db);
      await sql`analyze`.execute(db);
      const plan = async () =>
        (
          await sql<{
            detail: string;
          }>`explain query plan select * from events where id in (1, 2, 3, 4, 5, 6, 7, 8) and account_id = 1`.execute(
            db,
          )
        ).rows
          .map((r) => r.detail)
          .join('; ');
      // 10 rows known: scanning them is what the planner picks, and would keep picking at any size.
      assert.match(await plan(), /^SCAN events$/);
      await withTransaction(database, (tx) =>
        sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 100000) insert into events (account_id, data) select 1 + i % 2, 'x' from n`.execute(
          tx,
        ),
      );
      const now = await until(plan, (p) => !/^SCAN/.test(p));
      assert.match(
        now,
        /SEARCH events USING (INTEGER PRIMARY KEY|INDEX events_account_id)/,
        `plan after 100,000 rows: ${now}`,
      );
    } finally {
      await database.close();
    }
  }));

test("SQLite: the planner keeps ANALYZE's averages and not its samples, at start and after the thread analyzes", () =>
  inDir(async (dir) => {
    const file = path.join(dir, 'fsm.sqlite');
    const counts = async (db: Database['db']) =>
      (
        await sql<{ stat1: number; stat4: number }>`select (select count(*) from sqlite_stat1) as stat1,
          (select count(*) from sqlite_stat4) as stat4`.execute(db)
      ).rows[0];
    // A database analyzed elsewhere (as `npm run bench` seeds one): averages and samples both.
    const plain = openDatabase({ sqliteFile: file });
    await sql`create table events (id integer primary key, account_id integer, data text)`.execute(plain.db);
    await sql`create index events_account_id on events (account_id, id)`.execute(plain.db);
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
      insert into events (account_id, data) select 1 + i % 2, 'x' from n`.execute(plain.db);
    await sql`analyze`.execute(plain.db);
    const analyzed = await counts(plain.db);
    assert.ok(analyzed.stat1 > 0 && analyzed.stat4 > 0, JSON.stringify(analyzed));
    await plain.close();

    const database = openDatabase({ sqliteFile: file, backgroundCheckpoints: true, statisticsEveryMs: 100 });
    try {
      const atStart = await until(
        () => counts(database.db),
        (c) => c.stat4 === 0,
      );
      assert.deepEqual(atStart, { stat1: analyzed.stat1, stat4: 0 });
      const stat = async () =>
        (
          await sql<{ stat: string }>`select stat from sqlite_stat1 where idx = 'events_account_id'`.execute(
            database.db,
          )
        ).rows[0].stat;
      const before = await stat();
      // The table grows far past its statistics: the thread analyzes it again, and removes the samples again.
      await withTransaction(database, (tx) =>
        sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 100000)
          insert into events (account_id, data) select 1 + i % 2, 'x' from n`.execute(tx),
      );
      const after = await until(stat, (now) => now !== before);
      assert.notEqual(after, before, 'analyzed again after growing');
      assert.equal((await counts(database.db)).stat4, 0);
    } finally {
      await database.close();
    }
  }));
