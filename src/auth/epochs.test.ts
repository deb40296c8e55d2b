import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, createTenant, createTestApp, skipUnless, type Tenant, type TestApp } from '../../test/helpers.js';
import { epochOf } from './epochs.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));
const bump = (t: TestApp, accountId: number) =>
  sql`update accounts set auth_epoch = auth_epoch + 1 where id = ${accountId}`.execute(t.database.db);
const epochNow = async (t: TestApp, accountId: number) =>
  Number(
    (
      await t.database.db
        .selectFrom('accounts')
        .select('auth_epoch')
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).auth_epoch,
  );

/**
 * The revocation epochs every request with a cached token reads (epochs.ts): shared by the requests
 * that ask while a read is on its way, and never answered by a read sent before they asked.
 */
for (const dialect of DIALECTS) {
  describe(`revocation epochs read for many requests (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    let sent: string[] = [];
    before(async () => {
      t = await createTestApp(dialect, {
        deliveries: false,
        observe: (_d, _s, _f, text) => void (/^select "id", "auth_epoch"/.test(text) && sent.push(text)),
      });
      a = await createTenant(t, 'Alpha');
      b = await createTenant(t, 'Beta');
    });
    after(() => t?.close());

    test('asked after a change: the new epoch, for each account asked in one turn', async () => {
      const before = await epochNow(t, a.accountId);
      assert.equal(await epochOf(t.database.db, a.accountId), before);
      await bump(t, a.accountId);
      sent = [];
      const [ea, eb, missing] = await Promise.all([
        epochOf(t.database.db, a.accountId),
        epochOf(t.database.db, b.accountId),
        epochOf(t.database.db, 987654321),
      ]);
      assert.equal(ea, before + 1);
      assert.equal(eb, await epochNow(t, b.accountId));
      assert.equal(missing, undefined);
      // The three asked in one turn: one statement.
      assert.equal(sent.length, 1, sent.join('\n'));
    });

    if (dialect === 'postgres')
      test('those who ask while a read is on its way wait for the next, which sees what committed meanwhile', async () => {
        const before = await epochNow(t, a.accountId);
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let locked!: () => void;
        const isLocked = new Promise<void>((r) => (locked = r));
        // A transaction holds the table, so the first read waits on its way; it bumps the epoch
        // and commits while the others have asked.
        const holder = t.database.transaction(async (tx) => {
          await sql`lock table accounts in access exclusive mode`.execute(tx);
          locked();
          await held;
          await sql`update accounts set auth_epoch = auth_epoch + 1 where id = ${a.accountId}`.execute(tx);
        });
        await isLocked;
        sent = [];
        let second: Promise<number | undefined>, third: Promise<number | undefined>, first: Promise<number | undefined>;
        try {
          first = epochOf(t.database.db, a.accountId);
          await new Promise((r) => setTimeout(r, 50)); // sent, and waiting for the lock
          second = epochOf(t.database.db, a.accountId);
          await turn();
          await turn();
          third = epochOf(t.database.db, a.accountId);
        } finally {
          release();
        }
        await holder;
        const [, e2, e3] = await Promise.all([first, second, third]);
        // The second and third asked after the first read was sent: one read after it, after the commit.
        assert.equal(e2, before + 1);
        assert.equal(e3, before + 1);
        assert.equal(sent.length, 2, sent.join('\n'));
      });

    if (dialect === 'postgres')
      test('a failed read fails those who waited for it, and the next read is sent', async () => {
        const db = t.database.db;
        // An account id out of the column's range: PostgreSQL refuses the statement.
        await assert.rejects(epochOf(db, 2 ** 70));
        assert.equal(await epochOf(db, a.accountId), await epochNow(t, a.accountId));
      });
  });
}
