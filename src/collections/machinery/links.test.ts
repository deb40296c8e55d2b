import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery } from 'kysely';
import { createTestDb } from '../../../test/helpers.js';
import { registry } from '../index.js';
import type { AssocListField } from './fields.js';
import { listStatement } from './links.js';

// SQLite plans without statistics of the data (the bench's databases, a new account): a list read
// must start from the owners' links by their index, for one owner and for a page of them, whatever
// the account holds. PostgreSQL plans by its statistics and is not asked here.
test('every list is read from its owners’ links by an index, not from every link of the account', async () => {
  const t = await createTestDb('sqlite');
  try {
    const lists = registry.list.flatMap((c) =>
      Object.entries(c.fields)
        .filter(([, f]) => f.kind === 'assocList')
        .map(([name, f]) => ({ name: `${c.name}.${name}`, field: f as AssocListField })),
    );
    assert.ok(lists.length >= 8, `the registry declares lists (${lists.length})`);
    for (const { name, field } of lists)
      for (const own of [[1], [1, 2, 3]]) {
        const q = listStatement(t.database.db, field, 1, own).compile();
        const plan = await t.database.db.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]),
        );
        const steps = plan.rows.map((r) => r.detail);
        const first = steps[0] ?? '';
        assert.match(
          first,
          new RegExp(`^SEARCH l USING (COVERING )?INDEX \\S+ \\(account_id=\\? AND ${field.own}=\\?`),
          `${name} (${own.length}): ${steps.join('; ')}`,
        );
        assert.ok(!steps.some((s) => s.includes('TEMP B-TREE')), `${name} (${own.length}) sorts: ${steps.join('; ')}`);
      }
  } finally {
    await t.close();
  }
});
