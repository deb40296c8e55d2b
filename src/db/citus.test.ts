import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { createTestDb, skipUnless, type TestDb } from '../../test/helpers.js';

/**
 * docs/deployment.md's path to Citus, checked against the live PostgreSQL schema so it cannot drift:
 * which tables are distributed (every table with `account_id`, and `accounts` by its `id`), which
 * are reference tables, that nothing blocks distributing them, and that scripts/citus-distribute.sql
 * distributes exactly those. Citus requires every primary key and unique index of a distributed
 * table to include the distribution column, and a foreign key between distributed tables to join
 * their distribution columns; a foreign key from a table that is not distributed to one that is
 * cannot exist at all. A migration that breaks the rule (src/db/migrations/scheme.ts) fails here.
 */
const DOC = path.resolve(import.meta.dirname, '../../../docs/deployment.md');
const SCRIPT = path.resolve(import.meta.dirname, '../../../scripts/citus-distribute.sql');
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

/** What would stop `create_distributed_table`, one line per constraint. */
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

    test('nothing blocks distributing the tables', () => {
      assert.ok(schema.unique.length > 10 && schema.foreign.length > 10, 'the keys were read');
      assert.deepEqual(blockers(schema), []);
    });

    test('a table that breaks the rule is found (control)', async () => {
      const db = t.database.db;
      await sql`create table citus_control (id serial primary key, account_id integer not null, code text unique)`.execute(
        db,
      );
      await sql`create table citus_control_ref (id serial primary key, job_id integer,
        owner integer references accounts (id), foreign key (owner, job_id) references jobs (account_id, id))`.execute(
        db,
      );
      try {
        assert.deepEqual(blockers(await liveSchema(t)), [
          '`citus_control_ref`: foreign key (owner) references accounts (id)',
          '`citus_control_ref`: foreign key (owner, job_id) references jobs (account_id, id)',
          '`citus_control`: primary key (id)',
          '`citus_control`: unique (code)',
        ]);
      } finally {
        await sql`drop table citus_control, citus_control_ref`.execute(db);
      }
    });

    test('scripts/citus-distribute.sql distributes exactly the live tables, parents first', async () => {
      const db = t.database.db;
      // Citus's functions, as stubs that record their calls and check what Citus would.
      await sql`create table citus_calls (n serial, tbl regclass, col text, colocate text)`.execute(db);
      await sql`create function create_distributed_table(table_name regclass, distribution_column text,
          colocate_with text default 'default') returns void language plpgsql as $$
        begin
          if not exists (select 1 from pg_attribute where attrelid = table_name and attname = distribution_column
            and not attisdropped) then
            raise exception '% has no column %', table_name, distribution_column;
          end if;
          if colocate_with <> 'default' and not exists (select 1 from citus_calls where tbl = colocate_with::regclass) then
            raise exception '% is colocated with %, not yet distributed', table_name, colocate_with;
          end if;
          -- Every table its foreign keys reference is distributed or a reference table already.
          if exists (select 1 from pg_constraint k where k.conrelid = table_name and k.contype = 'f'
              and k.confrelid <> table_name and not exists (select 1 from citus_calls c where c.tbl = k.confrelid)) then
            raise exception '% references a table not yet distributed', table_name;
          end if;
          insert into citus_calls (tbl, col, colocate) values (table_name, distribution_column, colocate_with);
        end $$`.execute(db);
      await sql`create function create_reference_table(table_name regclass) returns void language sql as $$
        insert into citus_calls (tbl, col) values (table_name, null) $$`.execute(db);
      try {
        await sql.raw(fs.readFileSync(SCRIPT, 'utf8')).execute(db);
        const { rows } = await sql<{ tbl: string; col: string | null; colocate: string | null }>`
          select tbl::text as tbl, col, colocate from citus_calls order by n`.execute(db);
        const distributed = rows.filter((r) => r.col !== null);
        assert.deepEqual(
          Object.fromEntries(distributed.map((r) => [r.tbl, r.col])),
          Object.fromEntries(schema.distributed),
          'distributed, by their column',
        );
        assert.equal(distributed.length, schema.distributed.size, 'each once');
        assert.ok(
          distributed.every((r) => (r.tbl === 'accounts' ? r.colocate === 'default' : r.colocate === 'accounts')),
          'co-located with accounts',
        );
        assert.deepEqual(
          rows
            .filter((r) => r.col === null)
            .map((r) => r.tbl)
            .sort(),
          schema.tables.filter((n) => !schema.distributed.has(n)),
          'every other table a reference table',
        );
      } finally {
        await sql`drop function create_distributed_table(regclass, text, text), create_reference_table(regclass)`.execute(
          db,
        );
        await sql`drop table citus_calls`.execute(db);
      }
    });
  },
);
