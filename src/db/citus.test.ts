import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';

/**
 * docs/deployment.md's path to Citus, checked against the live PostgreSQL schema so it cannot drift:
 * which tables would be distributed (every table with `account_id`, and `accounts` by its `id`),
 * which would not, and what blocks distributing them today. Citus requires every primary key and
 * unique index of a distributed table to include the distribution column, and a foreign key
 * between distributed tables to join their distribution columns; a foreign key from a table that is
 * not distributed to one that is cannot exist at all.
 */
const DOC = path.resolve(import.meta.dirname, '../../../docs/deployment.md');
/** Kysely's own bookkeeping, not ours. */
const IGNORED = new Set(['kysely_migration', 'kysely_migration_lock']);

/** The `- \`name\`…` lines of a marked block of docs/deployment.md, as written (the name and what follows). */
function documented(block: string): string[] {
  const text = fs.readFileSync(DOC, 'utf8');
  const m = new RegExp(`<!-- ${block}:start -->\\n([\\s\\S]*?)<!-- ${block}:end -->`).exec(text);
  assert.ok(m, `docs/deployment.md has no ${block} block`);
  return m[1]
    .split('\n')
    .filter((l) => l.startsWith('- '))
    .map((l) => l.slice(2).trim());
}
const names = (lines: string[]) => lines.map((l) => /^`(\w+)`/.exec(l)?.[1] ?? l).sort();

interface Schema {
  tables: string[];
  /** Table to its distribution column, for the tables Citus would distribute. */
  distributed: Map<string, string>;
  unique: { table: string; primary: boolean; columns: string[] }[];
  foreign: { table: string; columns: string[]; target: string; targetColumns: string[] }[];
}

async function liveSchema(t: TestDb): Promise<Schema> {
  const db = t.database.db;
  const tables = (
    await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
  ).rows
    .map((r) => r.name)
    .filter((n) => !IGNORED.has(n))
    .sort();
  const withAccount = (
    await sql<{ name: string }>`
    select table_name as name from information_schema.columns
    where table_schema = current_schema() and column_name = 'account_id'`.execute(db)
  ).rows.map((r) => r.name);
  const distributed = new Map<string, string>([
    ['accounts', 'id'],
    ...withAccount.filter((n) => tables.includes(n)).map((n): [string, string] => [n, 'account_id']),
  ]);
  // Unique indexes cover primary keys, unique constraints and unique indexes alike; an expression column shows as null.
  const unique = (
    await sql<{ table: string; primary: boolean; columns: (string | null)[] }>`
    select c.relname as table, x.indisprimary as primary,
      array(select a.attname from unnest(x.indkey) with ordinality k(attnum, n)
            left join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum order by k.n)::text[] as columns
    from pg_index x join pg_class c on c.oid = x.indrelid join pg_namespace s on s.oid = c.relnamespace
    where s.nspname = current_schema() and x.indisunique`.execute(db)
  ).rows;
  const foreign = (
    await sql<{ table: string; columns: string[]; target: string; targetColumns: string[] }>`
    select c.relname as table, r.relname as target,
      array(select a.attname from unnest(k.conkey) with ordinality u(attnum, n)
            join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.attnum order by u.n)::text[] as columns,
      array(select a.attname from unnest(k.confkey) with ordinality u(attnum, n)
            join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.attnum order by u.n)::text[] as "targetColumns"
    from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_class r on r.oid = k.confrelid
    join pg_namespace s on s.oid = c.relnamespace
    where s.nspname = current_schema() and k.contype = 'f'`.execute(db)
  ).rows;
  return {
    tables,
    distributed,
    unique: unique
      .filter((u) => tables.includes(u.table))
      .map((u) => ({ ...u, columns: u.columns.map((c) => c ?? '(expression)') })),
    foreign: foreign.filter((f) => tables.includes(f.table)),
  };
}

/** What stops `create_distributed_table` today, one line per constraint, as docs/deployment.md lists it. */
function blockers(s: Schema): string[] {
  const out: string[] = [];
  for (const u of s.unique) {
    const column = s.distributed.get(u.table);
    if (column && !u.columns.includes(column))
      out.push(`\`${u.table}\`: ${u.primary ? 'primary key' : 'unique'} (${u.columns.join(', ')})`);
  }
  for (const f of s.foreign) {
    const from = s.distributed.get(f.table);
    const to = s.distributed.get(f.target);
    if (!to) continue; // to a reference table: allowed
    const joined = from !== undefined && f.columns.some((c, i) => c === from && f.targetColumns[i] === to);
    if (!joined)
      out.push(
        `\`${f.table}\`: foreign key (${f.columns.join(', ')}) references ${f.target} (${f.targetColumns.join(', ')})`,
      );
  }
  return out.sort();
}

describe(
  'docs/deployment.md: the path to Citus matches the live schema (postgres)',
  { skip: skipUnless('postgres') },
  () => {
    let t: TestDb;
    let schema: Schema;
    before(async () => {
      t = await createTestDb('postgres');
      schema = await liveSchema(t);
    });
    after(async () => t?.close());

    const hint = (lines: string[]) =>
      `the live schema says (paste into docs/deployment.md):\n${lines.map((l) => `- ${l}`).join('\n')}`;

    test('distributed tables: accounts by id, every table with account_id by account_id', () => {
      const live = [...schema.distributed.keys()].sort();
      assert.deepEqual(names(documented('citus-distributed')), live, hint(live.map((n) => `\`${n}\``)));
    });

    test('every other table is listed as not distributed', () => {
      const live = schema.tables.filter((n) => !schema.distributed.has(n));
      assert.deepEqual(names(documented('citus-reference')), live, hint(live.map((n) => `\`${n}\``)));
    });

    test('the blockers listed are exactly the live ones', () => {
      const live = blockers(schema);
      assert.deepEqual(documented('citus-blockers').sort(), live, hint(live));
    });
  },
);
