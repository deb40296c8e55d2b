import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, createTenant, skipUnless, type Tenant, type TestApp } from '../../../test/helpers.js';
import { ALL_PERMISSIONS, registry } from '../index.js';
import type { Caller } from '../machinery/collection.js';
import { parseListQuery } from '../machinery/modifiers.js';
import { list } from '../machinery/read.js';
import { createWriter, type ChangeHook } from '../machinery/write/index.js';
import { recordEvents } from './index.js';

const WRITERS = 8;
const WRITES_EACH = 25;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The ordering promise under concurrency: a reader polling `where=id > last` sees every event
 * exactly once. Transactions that drew their ids earlier must often commit later, or the test
 * proves nothing: a hook after the event recorder waits a random while before the commit, and on
 * PostgreSQL, where the ids are drawn inside COMMIT (migration 014), a second deferred trigger made
 * here waits a random while after ours drew them. Without the per-account lock that orders
 * commits, the reader skips events.
 */
for (const dialect of DIALECTS) {
  describe(`events ordering (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      t = await createTestApp(dialect, { deliveries: false });
      a = await createTenant(t);
      if (dialect === 'postgres') {
        // Deferred triggers on one row event fire in name order: this one after event_batches_record.
        await sql`create function test_slow_commit() returns trigger language plpgsql as $$
          begin perform pg_sleep(random() * 0.015); return null; end $$`.execute(t.database.db);
        await sql`create constraint trigger event_batches_slow after insert on event_batches
          deferrable initially deferred for each row execute function test_slow_commit()`.execute(t.database.db);
      }
    });
    after(() => t?.close());

    it('never lets a reader polling id > last miss or repeat an event', async () => {
      const slowCommit: ChangeHook = async () => sleep(Math.random() * 15);
      const { writer: _, ...services } = t.services;
      const writer = createWriter({ services, hooks: [recordEvents, slowCommit] });
      const caller = (): Caller => ({
        accountId: a.accountId,
        userId: a.adminId,
        role: 'administrator',
        permissions: new Set(ALL_PERMISSIONS),
        clientId: '',
        now: Date.now(),
        publicUrl: t.config.publicUrl,
      });
      const events = registry.get('events')!;
      // Several collections: creates of one table queue on its row counter, different tables do not.
      const targets = [
        ['clients', 'name'],
        ['statuses', 'label'],
        ['workgroups', 'name'],
        ['jobs', 'title'],
      ] as const;
      const poll = async (since: number) =>
        (
          await list(
            t.database.db,
            events,
            caller(),
            parseListQuery(events, { where: `id > ${since}`, recordsPerPage: '1000', fields: 'id' }),
          )
        ).items.map((e) => e.id as number);

      const start = (await poll(0)).at(-1) ?? 0;
      let done = false;
      const seen: number[] = [];
      const reader = (async () => {
        let last = start;
        for (;;) {
          const finished = done;
          const ids = await poll(last);
          for (const id of ids) {
            assert.ok(id > last, 'ids come in increasing order');
            seen.push(id);
            last = id;
          }
          if (finished) return;
          await sleep(1);
        }
      })();
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < WRITES_EACH; i++) {
          const [name, field] = targets[w % targets.length];
          const input = Array.from({ length: 1 + (i % 3) }, (_, k) => ({ [field]: `w${w}-${i}-${k}` }));
          const out = await writer.write({ collection: registry.get(name)!, caller: caller(), op: 'create', input });
          assert.equal(out.result, 'success');
        }
      });
      await Promise.all(writers);
      done = true;
      await reader;

      const all = await poll(start);
      assert.equal(all.length, WRITERS * [...Array(WRITES_EACH).keys()].reduce((n, i) => n + 1 + (i % 3), 0));
      assert.equal(new Set(seen).size, seen.length, 'no event seen twice');
      assert.deepEqual(seen, all, 'every event seen, none skipped');
    });
  });
}
