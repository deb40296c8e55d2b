import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { registry } from '../collections/index.js';
import { DIALECTS, createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';

/**
 * The declarations and the live tables agree, on both dialects: a column typo in a schema, or an
 * `onDelete` that is not what the foreign key does, fails here instead of compiling. (The row types
 * of src/db/types.ts are generated from the live tables: src/db/types.test.ts.)
 */

interface LiveColumn {
  nullable: boolean;
}
interface LiveKey {
  column: string;
  table: string;
  onDelete: string;
}

async function liveColumns(t: TestDb, table: string): Promise<Map<string, LiveColumn>> {
  const meta = await t.database.db.introspection.getTables();
  const found = meta.find((m) => m.name === table);
  assert.ok(found, `no table ${table}`);
  return new Map(found.columns.map((c) => [c.name, { nullable: c.isNullable }]));
}

async function foreignKeys(t: TestDb, table: string): Promise<LiveKey[]> {
  if (t.database.dialect === 'postgres') {
    const { rows } = await sql<{ column: string; target: string; rule: string }>`
      select kcu.column_name as column, ccu.table_name as target, rc.delete_rule as rule
      from information_schema.referential_constraints rc
      join information_schema.key_column_usage kcu on kcu.constraint_name = rc.constraint_name
      join information_schema.constraint_column_usage ccu on ccu.constraint_name = rc.unique_constraint_name
      where kcu.table_name = ${table}`.execute(t.database.db);
    return rows.map((r) => ({ column: r.column, table: r.target, onDelete: r.rule.toLowerCase() }));
  }
  const { rows } = await sql<{
    from: string;
    table: string;
    on_delete: string;
  }>`select * from pragma_foreign_key_list(${table})`.execute(t.database.db);
  return rows.map((r) => ({ column: r.from, table: r.table, onDelete: r.on_delete.toLowerCase() }));
}

/**
 * PostgreSQL keeps a few links by a delete trigger on the target instead of a foreign key
 * (016_deliveries_event_link): `<target>_deleted`, whose function deletes the rows that point at
 * the deleted ones. Such a link cascades.
 */
async function deletedByTrigger(
  t: TestDb,
  target: string,
  table: string,
  column: string,
): Promise<LiveKey | undefined> {
  if (t.database.dialect !== 'postgres') return undefined;
  // tgtype bits: 1 row-level, 2 before, 8 delete; enabled unless 'D'.
  const { rows } = await sql<{
    body: string;
  }>`select p.prosrc as body from pg_trigger g join pg_class c on c.oid = g.tgrelid
    join pg_proc p on p.oid = g.tgfoid where c.relname = ${target} and g.tgname = ${`${target}_deleted`} and not g.tgisinternal
    and g.tgtype & 11 = 8 and g.tgenabled <> 'D'`.execute(t.database.db);
  const deletes = rows.some((r) => new RegExp(`delete from ${table}\\b[^;]*\\.${column} = `).test(r.body));
  return deletes ? { column, table: target, onDelete: 'cascade' } : undefined;
}

const ACTIONS: Record<string, string[]> = {
  cascade: ['cascade'],
  'set null': ['set null'],
  restrict: ['restrict', 'no action'],
};

for (const dialect of DIALECTS) {
  describe(`declarations and live tables agree (${dialect})`, { skip: skipUnless(dialect) }, () => {
    let t: TestDb;
    before(async () => {
      t = await createTestDb(dialect);
    });
    after(() => t?.close());

    test("every column a collection declares exists, nullable as declared; associations' ON DELETE is what the key does", async () => {
      for (const c of registry.list) {
        const live = await liveColumns(t, c.table);
        const keys = await foreignKeys(t, c.table);
        for (const [name, field] of Object.entries(c.fields)) {
          const where = `${c.name}.${name}`;
          if (field.kind === 'scalar') {
            assert.ok(live.has(field.column), `${where}: no column ${field.column}`);
            if (!field.nullable && !field.readOnly)
              assert.equal(live.get(field.column)!.nullable, false, `${where} is not nullable`);
          } else if (field.kind === 'object') {
            for (const m of Object.values(field.members))
              assert.ok(live.has(m.column), `${where}: no column ${m.column}`);
          } else if (field.kind === 'assoc') {
            assert.ok(live.has(field.column), `${where}: no column ${field.column}`);
            assert.equal(live.get(field.column)!.nullable, !!field.nullable, `${where} nullable`);
            const key =
              keys.find((k) => k.column === field.column) ??
              (await deletedByTrigger(t, field.table, c.table, field.column));
            assert.ok(key, `${where}: no foreign key on ${field.column}`);
            assert.equal(key.table, field.table, `${where} points at ${field.table}`);
            assert.ok(
              ACTIONS[field.onDelete].includes(key.onDelete),
              `${where}: declared ${field.onDelete}, the key does ${key.onDelete}`,
            );
            const target = await liveColumns(t, field.table);
            for (const m of Object.values(field.members))
              assert.ok(target.has(m.column), `${where}: no column ${field.table}.${m.column}`);
          } else if (field.kind === 'assocList') {
            const link = await liveColumns(t, field.through);
            for (const col of ['account_id', field.own, field.other])
              assert.ok(link.has(col), `${where}: no column ${field.through}.${col}`);
          } else if (field.kind === 'computed') {
            for (const col of field.columns) assert.ok(live.has(col), `${where}: no column ${col}`);
          }
        }
      }
    });
  });
}
