import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registry } from '../../index.js';
import { createAccount } from '../../../accounts/service.js';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../../../test/helpers.js';
import type { Caller, Item } from '../collection.js';
import { createWriter, type Change, type Writer } from './index.js';

/**
 * The pipeline's one hook sees every committed change of every item, with the item before and
 * after: the items written, what rules change on other rows, and what the database changes by
 * itself (cascades, SET NULL, link rows). Nothing when the batch fails or changes nothing.
 */
for (const dialect of DIALECTS) {
  describe(`write pipeline: the change hook (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    let writer: Writer;
    let caller: Caller;
    const seen: Change[][] = [];
    let fail = false;

    const c = (name: string) => registry.get(name)!;
    const write = async (name: string, op: 'create' | 'update' | 'delete', input: Item[]) => {
      const out = await writer.write({ collection: c(name), caller, op, input });
      assert.equal(out.result, 'success', JSON.stringify(out));
      return out.result === 'success' ? out.items : [];
    };
    /** The changes of the last write, as `collection.type#id`, sorted. */
    const last = () =>
      seen
        .at(-1)!
        .map((ch) => `${ch.collection.name}.${ch.type}#${ch.id}`)
        .sort();
    const find = (name: string, id: number) => seen.at(-1)!.find((ch) => ch.collection.name === name && ch.id === id)!;

    before(async () => {
      t = await createTestDb(dialect);
      writer = createWriter({
        services: t.services,
        hooks: [
          async (tx, _caller, changes) => {
            // Inside the transaction: what the hook writes commits or rolls back with the change.
            await tx
              .insertInto('settings')
              .values({ key: `hook-${seen.length}`, value: String(changes.length) })
              .execute();
            if (fail) throw new Error('hook failed');
            seen.push(changes);
          },
        ],
      });
      const { account, user } = await createAccount(writer, {
        companyName: 'Hooked Ltd',
        firstName: 'Ada',
        lastName: 'Admin',
        mobile: '+447700900001',
        login: `hook-${dialect}-${Date.now()}`,
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
    beforeEach(() => {
      fail = false;
    });
    after(() => t?.close());

    test('an account and its seeds are recorded as created items', () => {
      assert.deepEqual(
        seen
          .at(-1)!
          .map((ch) => `${ch.collection.name}.${ch.type}`)
          .sort(),
        ['statuses.created', 'statuses.created', 'statuses.created', 'statuses.created', 'users.created'],
      );
    });

    test('create, update with old and new, and a PATCH that changes nothing records nothing', async () => {
      const [job] = await write('jobs', 'create', [{ title: 'Boiler' }]);
      assert.deepEqual(last(), [`jobs.created#${job.id}`]);
      assert.equal(find('jobs', job.id as number).after!.title, 'Boiler');
      assert.equal(find('jobs', job.id as number).before, null);

      await write('jobs', 'update', [{ id: job.id, title: 'Boiler service', priority: 'high' }]);
      assert.deepEqual(find('jobs', job.id as number).changes, {
        title: { old: 'Boiler', new: 'Boiler service' },
        priority: { old: 'normal', new: 'high' },
      });

      const n = seen.length;
      await write('jobs', 'update', [{ id: job.id, title: 'Boiler service' }]);
      assert.equal(seen.length, n + 1);
      assert.deepEqual(seen.at(-1), []);
    });

    test("a rule's change to another row: the old default status loses isDefault", async () => {
      const old = (
        await t.database.db
          .selectFrom('statuses')
          .select('id')
          .where('account_id', '=', caller.accountId)
          .where('is_default', '=', 1)
          .executeTakeFirstOrThrow()
      ).id;
      const [made] = await write('statuses', 'create', [{ label: 'Urgent', isDefault: true }]);
      assert.deepEqual(last(), [`statuses.created#${made.id}`, `statuses.updated#${old}`].sort());
      assert.deepEqual(find('statuses', old).changes, { isDefault: { old: true, new: false } });
    });

    test('a physical delete reports what the database cascades and sets null', async () => {
      const [worker] = await write('users', 'create', [
        { account: { id: caller.accountId }, firstName: 'Bob', lastName: 'Builder', mobile: '+447700900002' },
      ]);
      const [job] = await write('jobs', 'create', [{ title: 'Cascade' }]);
      const visits = await write(
        'visits',
        'create',
        [1, 2].map((i) => ({
          job: { id: job.id },
          user: { id: worker.id },
          label: `v${i}`,
          startTime: '2030-01-01T09:00:00Z',
          endTime: '2030-01-01T10:00:00Z',
        })),
      );
      const [note] = await write('notes', 'create', [{ job: { id: job.id }, body: 'Ring first' }]);
      const [group] = await write('workgroups', 'create', [{ name: 'Crew', users: [{ id: worker.id }] }]);

      await write('users', 'delete', [{ id: worker.id }]);
      assert.deepEqual(
        last(),
        [
          `users.deleted#${worker.id}`,
          `visits.updated#${visits[0].id}`,
          `visits.updated#${visits[1].id}`,
          `workgroups.updated#${group.id}`,
        ].sort(),
      );
      assert.deepEqual(find('visits', visits[0].id as number).changes, { user: { old: { id: worker.id }, new: null } });
      assert.deepEqual(find('workgroups', group.id as number).changes, {
        users: { old: [{ id: worker.id }], new: [] },
      });
      assert.equal(find('users', worker.id as number).before!.firstName, 'Bob');

      await write('jobs', 'delete', [{ id: job.id }]);
      assert.deepEqual(
        last(),
        [`jobs.deleted#${job.id}`, `notes.deleted#${note.id}`, ...visits.map((v) => `visits.deleted#${v.id}`)].sort(),
      );
      assert.equal(find('notes', note.id as number).before!.body, 'Ring first');
    });

    test('a failed batch records nothing; a hook that fails rolls the write back', async () => {
      const n = seen.length;
      const out = await writer.write({
        collection: c('jobs'),
        caller,
        op: 'create',
        input: [{ title: 'ok' }, { title: '' }],
      });
      assert.equal(out.result, 'failure');
      assert.equal(seen.length, n);

      fail = true;
      await assert.rejects(
        writer.write({ collection: c('clients'), caller, op: 'create', input: [{ name: 'Never saved' }] }),
        /hook failed/,
      );
      const saved = await t.database.db.selectFrom('clients').select('id').where('name', '=', 'Never saved').execute();
      assert.deepEqual(saved, []);
      const marks = await t.database.db
        .selectFrom('settings')
        .select('key')
        .where('key', '=', `hook-${seen.length}`)
        .execute();
      assert.deepEqual(marks, [], "the hook's own write rolled back with the change");
    });
  });
}
