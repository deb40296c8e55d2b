import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from '../../index.js';
import { createAccount } from '../../../accounts/service.js';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../../../test/helpers.js';
import type { Caller, Item } from '../collection.js';
import { createWriter, type Writer } from './index.js';

/**
 * All or nothing when the database itself refuses an item inside the transaction, after every
 * check in code passed: the items before it in the batch were already written, so only the
 * transaction can take them back. (Without it, the first items of these batches would stay.)
 */
for (const dialect of DIALECTS) {
  describe(`write pipeline: atomic when the database refuses (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    let writer: Writer;
    let paused: Writer;
    let caller: Caller;
    /** Holds a transaction open after its rows were written, until released. */
    let gate: { reached: () => void; release: Promise<void> } | undefined;

    const names = async (
      table: 'workgroups' | 'jobs' | 'statuses',
      column: 'name' | 'title' | 'label',
      values: string[],
    ) =>
      (
        await t.database.db
          .selectFrom(table)
          .select(column as never)
          .where(column as never, 'in', values as never)
          .execute()
      )
        .map((r) => Object.values(r)[0])
        .sort();
    const write = (w: Writer, name: string, op: 'create' | 'delete', input: Item[]) =>
      w.write({ collection: registry.get(name)!, caller, op, input });

    /** Starts `first` on the pausing writer, waits until its rows are in (uncommitted), returns a release. */
    async function holdOpen(first: Promise<unknown>): Promise<() => Promise<unknown>> {
      let reached!: () => void;
      let release!: () => void;
      const inside = new Promise<void>((r) => (reached = r));
      gate = { reached, release: new Promise<void>((r) => (release = r)) };
      const done = first;
      await Promise.race([inside, done]);
      return async () => {
        release();
        return done;
      };
    }

    before(async () => {
      t = await createTestDb(dialect);
      writer = t.services.writer;
      paused = createWriter({
        services: t.services,
        hooks: [
          async () => {
            const g = gate;
            gate = undefined;
            if (g) {
              g.reached();
              await g.release;
            }
          },
        ],
      });
      const { account, user } = await createAccount(writer, {
        companyName: 'Atomic Ltd',
        firstName: 'Ada',
        lastName: 'Admin',
        mobile: '+447700900001',
        login: `atomic-${dialect}-${Date.now()}`,
        password: 'correct horse battery',
      });
      caller = {
        accountId: account.id,
        userId: user.id,
        role: 'administrator',
        permissions: new Set(),
        clientId: 'test',
        now: Date.now(),
        publicUrl: 'http://x',
      };
    });
    after(() => t?.close());

    test('a restricting foreign key refuses the second delete: the first is undone', async () => {
      const made = await write(writer, 'statuses', 'create', [{ label: 'Spare' }, { label: 'Used' }]);
      assert.equal(made.result, 'success');
      const [spare, used] = made.result === 'success' ? made.items : [];
      assert.equal(
        (await write(writer, 'jobs', 'create', [{ title: 'Holds a status', status: { id: used.id } }])).result,
        'success',
      );
      const out = await write(writer, 'statuses', 'delete', [{ id: spare.id }, { id: used.id }]);
      assert.equal(out.result, 'failure');
      assert.deepEqual(out.metadata, { receivedItemsCount: 2, validItems: [0], invalidItems: [1] });
      assert.deepEqual(out.result === 'failure' ? out.failures[0].errors.map((e) => `${e.code}:${e.field}`) : [], [
        '1051:id',
      ]);
      assert.deepEqual(await names('statuses', 'label', ['Spare', 'Used']), ['Spare', 'Used']);
    });

    test('two batches race for one unique value: the loser saves nothing of its batch', async () => {
      const release = await holdOpen(write(paused, 'workgroups', 'create', [{ name: 'Race' }]));
      // The second batch passes its unique check (the first is not committed) or waits its turn (SQLite).
      const second = write(writer, 'workgroups', 'create', [{ name: 'Innocent bystander' }, { name: 'Race' }]);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(((await release()) as { result: string }).result, 'success');
      const out = await second;
      assert.equal(out.result, 'failure');
      assert.deepEqual(
        out.result === 'failure' ? out.failures.map((f) => f.errors.map((e) => `${e.code}:${e.field}`)) : [],
        [['1046:name']],
      );
      // The items are inserted by one statement: the refused one is still named (the write is done again item by item).
      assert.deepEqual(out.metadata.invalidItems, [1]);
      assert.deepEqual(await names('workgroups', 'name', ['Race', 'Innocent bystander']), ['Race']);
    });

    test('an update batch refused by the database (one statement on PostgreSQL) names its item and saves nothing', async () => {
      const made = await write(writer, 'workgroups', 'create', [
        { name: 'Up one' },
        { name: 'Up two' },
        { name: 'Up three' },
      ]);
      const [one, two, three] = made.result === 'success' ? made.items : [];
      const release = await holdOpen(
        paused.write({
          collection: registry.get('workgroups')!,
          caller,
          op: 'update',
          input: [{ id: three.id, name: 'Up race' }],
        }),
      );
      const second = writer.write({
        collection: registry.get('workgroups')!,
        caller,
        op: 'update',
        input: [
          { id: one.id, name: 'Up fine' },
          { id: two.id, name: 'Up race' },
        ],
      });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(((await release()) as { result: string }).result, 'success');
      const out = await second;
      assert.equal(out.result, 'failure', JSON.stringify(out));
      assert.deepEqual(out.metadata.invalidItems, [1]);
      assert.deepEqual(
        out.result === 'failure' ? out.failures.map((f) => f.errors.map((e) => `${e.code}:${e.field}`)) : [],
        [['1046:name']],
      );
      assert.deepEqual(await names('workgroups', 'name', ['Up one', 'Up two', 'Up fine', 'Up race']), [
        'Up one',
        'Up race',
        'Up two',
      ]);
    });

    test('a referenced item removed between the check and the write: nothing of the batch is saved', async () => {
      const made = await write(writer, 'clients', 'create', [{ name: 'Leaving' }]);
      const client = made.result === 'success' ? made.items[0] : { id: 0 };
      const release = await holdOpen(write(paused, 'clients', 'delete', [{ id: client.id }]));
      const second = write(writer, 'jobs', 'create', [
        { title: 'Fine job' },
        { title: 'Orphan job', client: { id: client.id } },
      ]);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(((await release()) as { result: string }).result, 'success');
      const out = await second;
      assert.equal(out.result, 'failure', JSON.stringify(out));
      assert.deepEqual(
        out.result === 'failure' ? out.failures.map((f) => f.errors.map((e) => `${e.code}:${e.field}`)) : [],
        [['1045:client']],
      );
      assert.deepEqual(out.metadata.invalidItems, [1]);
      assert.deepEqual(await names('jobs', 'title', ['Fine job', 'Orphan job']), []);
    });
  });
}
