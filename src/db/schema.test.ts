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
/** A foreign key: its columns, the target's, and what a delete of the target does to the row. */
interface LiveKey {
  columns: string[];
  table: string;
  targetColumns: string[];
  onDelete: string;
}

async function liveColumns(t: TestDb, table: string): Promise<Map<string, LiveColumn>> {
  const meta = await t.database.db.introspection.getTables();
  const found = meta.find((m) => m.name === table);
  assert.ok(found, `no table ${table}`);
  return new Map(found.columns.map((c) => [c.name, { nullable: c.isNullable }]));
}

/**
 * The table's foreign keys. A SET NULL that nulls other columns than the link's would null
 * `account_id` too: PostgreSQL's must name the link's column alone (`set null (x_id)`); SQLite's
 * keys take no action and a trigger nulls the column (src/db/migrations/scheme.ts), which counts as
 * the key's SET NULL here.
 */
async function foreignKeys(t: TestDb, table: string): Promise<LiveKey[]> {
  const db = t.database.db;
  if (t.database.dialect.name === 'postgres') {
    const { rows } = await sql<{
      columns: string[];
      table: string;
      targetColumns: string[];
      action: string;
      nulls: string[];
    }>`
      select r.relname as table, k.confdeltype as action,
        array(select a.attname from unnest(k.conkey) with ordinality u(n, i)
          join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.n order by u.i)::text[] as columns,
        array(select a.attname from unnest(k.confkey) with ordinality u(n, i)
          join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.n order by u.i)::text[] as "targetColumns",
        array(select a.attname from unnest(coalesce(k.confdelsetcols, k.conkey)) u(n)
          join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.n)::text[] as nulls
      from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_class r on r.oid = k.confrelid
      where k.contype = 'f' and c.relname = ${table}`.execute(db);
    const action = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' };
    return rows.map((r) => ({
      ...r,
      onDelete:
        r.action === 'n' && r.nulls.join() !== r.columns.filter((c) => c !== 'account_id').join()
          ? `set null (${r.nulls.join(', ')})`
          : action[r.action as keyof typeof action],
    }));
  }
  const { rows } = await sql<{ id: number; from: string; table: string; to: string; on_delete: string }>`
    select id, "from", "table", "to", on_delete from pragma_foreign_key_list(${table}) order by id, seq`.execute(db);
  const keys = new Map<number, LiveKey>();
  for (const r of rows) {
    const k = keys.get(r.id) ?? { columns: [], table: r.table, targetColumns: [], onDelete: r.on_delete.toLowerCase() };
    k.columns.push(r.from);
    k.targetColumns.push(r.to);
    keys.set(r.id, k);
  }
  const { rows: triggers } = await sql<{ name: string; body: string }>`
    select name, sql as body from sqlite_master where type = 'trigger'`.execute(db);
  return [...keys.values()].map((k) => {
    const column = k.columns[k.columns.length - 1];
    const trigger = triggers.find((g) => g.name === `${k.table}_delete_nulls_${table}_${column}`);
    const nulls =
      k.onDelete === 'no action' &&
      trigger &&
      new RegExp(
        `after delete on ${k.table} .*update ${table} set ${column} = null where account_id = old\\.account_id and ${column} = old\\.id`,
        'is',
      ).test(trigger.body);
    return nulls ? { ...k, onDelete: 'set null' } : k;
  });
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
  if (t.database.dialect.name !== 'postgres') return undefined;
  // tgtype bits: 1 row-level, 2 before, 8 delete; enabled unless 'D'.
  const { rows } = await sql<{
    body: string;
  }>`select p.prosrc as body from pg_trigger g join pg_class c on c.oid = g.tgrelid
    join pg_proc p on p.oid = g.tgfoid where c.relname = ${target} and g.tgname = ${`${target}_deleted`} and not g.tgisinternal
    and g.tgtype & 11 = 8 and g.tgenabled <> 'D'`.execute(t.database.db);
  const deletes = rows.some((r) => new RegExp(`delete from ${table}\\b[^;]*\\.${column} = `).test(r.body));
  return deletes
    ? { columns: ['account_id', column], table: target, targetColumns: ['account_id', 'id'], onDelete: 'cascade' }
    : undefined;
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
              keys.find((k) => k.columns[k.columns.length - 1] === field.column) ??
              (await deletedByTrigger(t, field.table, c.table, field.column));
            assert.ok(key, `${where}: no foreign key on ${field.column}`);
            assert.equal(key.table, field.table, `${where} points at ${field.table}`);
            // Within the account: (account_id, x_id) -> (account_id, id); accounts by id alone.
            const within =
              field.table === 'accounts'
                ? [[field.column], ['id']]
                : [
                    ['account_id', field.column],
                    ['account_id', 'id'],
                  ];
            assert.deepEqual([key.columns, key.targetColumns], within, `${where}: a key within the account`);
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
