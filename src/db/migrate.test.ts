import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';
import { idempotencyKeys } from './migrations/011_idempotency_keys.js';
import { rowVersions } from './migrations/011_row_versions.js';
import { LEGACY_LAST, MIGRATION_NAMES, migrateToLatest, orderError } from './migrate.js';

/**
 * Migrations apply in one order: the legacy ones (up to 017, numbered by branches apart) may have
 * been applied in another, and still are accepted; from 018 on each has a number of its own,
 * higher than the one before, and a migration that would apply before one already applied is
 * refused instead of run out of order.
 */
test('every migration after the legacy ones has a unique, increasing number', () => {
  const later = MIGRATION_NAMES.filter((n) => n > LEGACY_LAST);
  assert.ok(later.length >= 2, 'the later migrations were read');
  assert.ok(MIGRATION_NAMES.includes(LEGACY_LAST));
  let previous = Number(LEGACY_LAST.slice(0, 3));
  for (const name of later) {
    const m = /^(\d{3})_[a-z0-9_]+$/.exec(name);
    assert.ok(m, `${name}: a three-digit number, an underscore and a lower-case name`);
    assert.ok(Number(m[1]) > previous, `${name}: numbered after the migration listed before it`);
    previous = Number(m[1]);
  }
  // Kysely applies pending migrations in name order: the listed order is that order.
  assert.deepEqual(later, [...later].sort());
});

test('the only disorder accepted is among the legacy migrations, before any later one ran', () => {
  const known = ['001_a', '010_events', '011_x', '011_y', LEGACY_LAST, '018_a', '019_b', '020_c'];
  // Legacy ones applied in any order, some still pending: fine while nothing later ran.
  assert.equal(orderError(known, ['001_a', '011_y', '011_x']), undefined);
  assert.equal(orderError(known, ['001_a', '011_y']), undefined);
  assert.equal(orderError(known, []), undefined);
  assert.equal(orderError(known, known.slice(0, 6)), undefined);
  // A legacy one pending after a later one ran.
  assert.match(orderError(known, ['001_a', '011_x', '011_y', LEGACY_LAST, '018_a'])!, /010_events would apply before/);
  // A later one pending before one already applied.
  assert.match(orderError(known, [...known.slice(0, 5), '019_b'])!, /018_a would apply before 019_b/);
  assert.match(orderError(known, [...known.slice(0, 6), '020_c'])!, /019_b would apply before 020_c/);
  // A migration this code does not know.
  assert.match(orderError(known, [...known, '021_d'])!, /does not know: 021_d/);
});

for (const dialect of DIALECTS) {
  test(
    `a database that applied legacy migrations out of order still migrates (${dialect})`,
    {
      skip: skipUnless(dialect),
    },
    async () => {
      // As a branch left it: both 011s applied, 010 (another branch's) not yet.
      const t = await createTestDb(dialect, { upTo: '009_client_publisher' });
      try {
        for (const [name, m] of [
          ['011_idempotency_keys', idempotencyKeys],
          ['011_row_versions', rowVersions],
        ] as const) {
          await m(dialect).up(t.database.db);
          await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
            t.database.db,
          );
        }
        await migrateToLatest(t.database);
        const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(t.database.db);
        assert.deepEqual(rows.map((r) => r.name).sort(), [...MIGRATION_NAMES].sort());
        assert.ok((await t.database.db.introspection.getTables()).some((x) => x.name === 'events'));
      } finally {
        await t.close();
      }
    },
  );

  describe(`refusing migrations out of order (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect);
    });
    after(() => t?.close());

    const names = async () =>
      (await sql<{ name: string }>`select name from kysely_migration`.execute(t.database.db)).rows.map((r) => r.name);
    const forget = (name: string) => sql`delete from kysely_migration where name = ${name}`.execute(t.database.db);

    test('every migration was applied once', async () => {
      assert.deepEqual((await names()).sort(), [...MIGRATION_NAMES].sort());
    });

    test('a later migration missing below one applied is refused, and nothing runs', async () => {
      const later = MIGRATION_NAMES.filter((n) => n > LEGACY_LAST);
      const [first, last] = [later[0], later[later.length - 1]];
      await forget(first);
      await assert.rejects(migrateToLatest(t.database), new RegExp(`${first} would apply before ${last}`));
      assert.ok(!(await names()).includes(first), 'not run');
      await sql`insert into kysely_migration (name, timestamp) values (${first}, ${new Date().toISOString()})`.execute(
        t.database.db,
      );
      await migrateToLatest(t.database); // nothing pending: nothing to refuse
    });

    test('a legacy migration missing after a later one ran is refused', async () => {
      await forget('010_events');
      await assert.rejects(migrateToLatest(t.database), /010_events would apply before/);
    });
  });
}
