import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';
import { itemKey, linkKey, sqliteLinkClause, type Link } from './scheme.js';

/** The item tables of this day: `id` and `account_id`. */
const ITEMS = [
  ...['roles', 'users', 'workgroups', 'oauth_codes', 'oauth_tokens', 'auth_sessions', 'statuses', 'clients'],
  ...['jobs', 'visits', 'files', 'notes', 'idempotency_keys', 'events', 'webhooks', 'deliveries'],
];
/** Their indexes on (account_id, id), which the new keys replace. */
const ACCOUNT_ID_INDEXES = [
  ...['roles_account', 'users_account_id', 'clients_account_id', 'jobs_account_id', 'visits_account_id'],
  ...['files_account_id', 'notes_account_id', 'events_account_id', 'webhooks_account_id', 'deliveries_account_id'],
];

const link = (column: string, table: string, onDelete: Link['onDelete']): Link => ({ column, table, onDelete });
/** Every link between items of an account, with what deleting the linked item does. */
const LINKS: Record<string, Link[]> = {
  users: [link('role_id', 'roles', 'restrict')],
  workgroup_members: [link('workgroup_id', 'workgroups', 'cascade'), link('user_id', 'users', 'cascade')],
  oauth_codes: [link('user_id', 'users', 'cascade')],
  oauth_tokens: [link('user_id', 'users', 'cascade')],
  auth_sessions: [link('user_id', 'users', 'cascade')],
  jobs: [
    link('client_id', 'clients', 'set null'),
    link('status_id', 'statuses', 'restrict'),
    link('created_by', 'users', 'set null'),
  ],
  visits: [link('job_id', 'jobs', 'cascade'), link('user_id', 'users', 'set null')],
  files: [link('job_id', 'jobs', 'set null'), link('user_id', 'users', 'set null')],
  notes: [link('job_id', 'jobs', 'cascade'), link('author_id', 'users', 'set null')],
};
/** SQLite only: PostgreSQL keeps these links by the delete triggers of 016 and 017. */
const SQLITE_LINKS: Record<string, Link[]> = {
  deliveries: [link('webhook_id', 'webhooks', 'cascade'), link('event_id', 'events', 'cascade')],
  webhook_cursors: [link('webhook_id', 'webhooks', 'cascade')],
};
/** Secrets found by their hash: unique with their account. */
const SECRETS = [
  ['oauth_codes', 'code_hash'],
  ['oauth_tokens', 'token_hash'],
  ['auth_sessions', 'session_hash'],
];

/**
 * Keys a Citus cluster can distribute by account (PRODUCT §14; the scheme: scheme.ts): every
 * primary key, unique constraint and foreign key of a table with `account_id` includes it.
 *
 * - Items are keyed by `(account_id, id)` (PostgreSQL's primary key; SQLite keeps its rowid `id`
 *   and makes its `(account_id, id)` index unique), replacing the `(account_id, id)` indexes.
 * - Links are foreign keys `(account_id, x_id) -> x (account_id, id)`, so a link into another
 *   account is refused by the database too; SET NULL nulls the link's column only.
 * - `workgroup_members` is keyed by `(account_id, workgroup_id, user_id)`.
 * - Secrets (codes, tokens, sessions) are unique by `(hash, account_id)`: found by the hash and the
 *   account the secret names (src/auth/secrets.ts), or by the hash alone for one issued before.
 * - `users.login` is no longer unique by itself: `logins`, one row per login naming its user and
 *   account (no `account_id` column: a reference table, copied to every node), keeps it unique in
 *   the service and finds a signing-in user's account.
 *
 * PostgreSQL changes the keys in place (one transaction). SQLite cannot change a table's foreign
 * keys: the tables with links are rebuilt (new table, copy, drop, rename: its rowids, indexes,
 * triggers and AUTOINCREMENT counter kept) with foreign keys off and the rename's legacy mode on,
 * in one transaction that checks every foreign key (`PRAGMA foreign_key_check`) before it commits.
 * A database holding a link into another account (never written by the server) stops here.
 */
export const accountKeys = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect === 'postgres') await postgres(db);
    else await sqlite(db);
  },
});

async function postgres(db: AnyDb): Promise<void> {
  const { rows: keys } = await sql<{ name: string; table: string }>`
    select k.conname as name, t.relname as table from pg_constraint k join pg_class t on t.oid = k.conrelid
    join pg_class r on r.oid = k.confrelid
    where k.contype = 'f' and r.relname <> 'accounts' and t.relnamespace = current_schema()::regnamespace`.execute(db);
  for (const k of keys) await sql.raw(`alter table ${k.table} drop constraint ${k.name}`).execute(db);
  for (const table of [...ITEMS, 'workgroup_members']) {
    const { rows } = await sql<{ name: string }>`select conname as name from pg_constraint
      where conrelid = ${table}::regclass and contype = 'p'`.execute(db);
    for (const r of rows) await sql.raw(`alter table ${table} drop constraint ${r.name}`).execute(db);
  }
  for (const index of ACCOUNT_ID_INDEXES) await sql.raw(`drop index ${index}`).execute(db);
  for (const table of ITEMS) await itemKey(db, 'postgres', table);
  await sql`alter table workgroup_members add constraint workgroup_members_pkey
    primary key (account_id, workgroup_id, user_id)`.execute(db);
  for (const [table, column] of SECRETS) {
    await sql.raw(`alter table ${table} drop constraint ${table}_${column}_key`).execute(db);
  }
  await sql`alter table users drop constraint users_login_key`.execute(db);
  await common(db, 'postgres');
  for (const [table, links] of Object.entries(LINKS)) {
    for (const l of links) await linkKey(db, 'postgres', table, l);
  }
  // The link rows' trigger (011) bumped its items by id alone, which no key serves any more.
  await sql`create or replace function fsm_bump_members() returns trigger language plpgsql as $$
    declare r record;
    begin
      if tg_op = 'DELETE' then r := old; else r := new; end if;
      update workgroups set version = version + 1 where account_id = r.account_id and id = r.workgroup_id;
      update users set version = version + 1 where account_id = r.account_id and id = r.user_id;
      return null;
    end $$`.execute(db);
}

/** What both dialects make alike: the secrets' keys, `logins`, the indexes of unindexed links. */
async function common(db: AnyDb, dialect: Dialect): Promise<void> {
  for (const [table, column] of SECRETS) {
    await sql.raw(`create unique index ${table}_${column} on ${table} (${column}, account_id)`).execute(db);
  }
  await sql`create table logins (
    login text not null primary key,
    account integer not null,
    user_id integer not null
  )`.execute(db);
  await sql`insert into logins (login, account, user_id) select login, account_id, id from users where login is not null`.execute(
    db,
  );
  // Deleting a user checks its codes and sessions: by account and user, not by reading them all.
  for (const table of ['oauth_codes', 'auth_sessions']) {
    await sql.raw(`create index ${table}_user on ${table} (account_id, user_id)`).execute(db);
  }
  if (dialect === 'sqlite') {
    for (const [table, links] of Object.entries(LINKS)) {
      for (const l of links) await linkKey(db, 'sqlite', table, l);
    }
  }
}

async function sqlite(db: AnyDb): Promise<void> {
  // Kysely records the migration after this returns, outside its transaction: a process stopped
  // between the two finds the work committed (one transaction, which made `logins`) and records it.
  const { rows: done } = await sql`select 1 from sqlite_master where type = 'table' and name = 'logins'`.execute(db);
  if (done.length) return;
  await sql`pragma foreign_keys = off`.execute(db);
  await sql`pragma legacy_alter_table = on`.execute(db);
  try {
    await sql`begin immediate`.execute(db);
    try {
      for (const index of ACCOUNT_ID_INDEXES) await sql.raw(`drop index ${index}`).execute(db);
      for (const table of ITEMS) await itemKey(db, 'sqlite', table);
      for (const [table, links] of Object.entries({ ...LINKS, ...SQLITE_LINKS })) {
        const primaryKey =
          table === 'workgroup_members'
            ? ['account_id', 'workgroup_id', 'user_id']
            : table === 'webhook_cursors'
              ? ['account_id', 'webhook_id']
              : undefined;
        await rebuild(db, table, links, primaryKey);
      }
      await common(db, 'sqlite');
      const { rows } = await sql<{ table: string; rowid: number; parent: string }>`pragma foreign_key_check`.execute(
        db,
      );
      if (rows.length) {
        const where = rows.slice(0, 10).map((r) => `${r.table} row ${r.rowid} -> ${r.parent}`);
        throw new Error(`rows link outside their account or to nothing: ${where.join(', ')}`);
      }
      await sql`commit`.execute(db);
    } catch (err) {
      await sql`rollback`.execute(db);
      throw err;
    }
  } finally {
    await sql`pragma legacy_alter_table = off`.execute(db);
    await sql`pragma foreign_keys = on`.execute(db);
  }
}

interface Column {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

/**
 * SQLite's table rebuilt with the account's foreign keys: the same columns (no column-level UNIQUE:
 * the unique values that stay get an index with their account), its key to `accounts` kept, `links`
 * as composite keys, its rows (rowids too), indexes and triggers kept, and its AUTOINCREMENT
 * counter, so the ids of deleted rows are never given again. `primaryKey`: a composite key instead
 * of the rowid `id`.
 */
async function rebuild(db: AnyDb, table: string, links: Link[], primaryKey?: string[]): Promise<void> {
  const { rows: columns } = await sql<Column>`select name, type, "notnull", dflt_value, pk
    from pragma_table_info(${table}) order by cid`.execute(db);
  const { rows: accountKeys } = await sql<{ from: string; on_delete: string }>`select "from", on_delete
    from pragma_foreign_key_list(${table}) where "table" = 'accounts'`.execute(db);
  const { rows: kept } = await sql<{ sql: string }>`select sql from sqlite_master
    where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null order by type, name`.execute(db);
  const { rows: seq } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(db);
  const definitions = [
    ...columns.map(
      (c) =>
        `${c.name} ${c.type}${!primaryKey && c.pk ? ' primary key autoincrement' : ''}${c.notnull ? ' not null' : ''}` +
        (c.dflt_value !== null ? ` default ${c.dflt_value}` : ''),
    ),
    ...(primaryKey ? [`primary key (${primaryKey.join(', ')})`] : []),
    ...accountKeys.map(
      (k) => `foreign key (${k.from}) references accounts (id) on delete ${k.on_delete.toLowerCase()}`,
    ),
    ...links.map((l) => sqliteLinkClause(table, l)),
  ];
  const names = columns.map((c) => c.name).join(', ');
  await sql.raw(`create table ${table}__new (\n  ${definitions.join(',\n  ')}\n)`).execute(db);
  await sql.raw(`insert into ${table}__new (${names}) select ${names} from ${table}`).execute(db);
  await sql.raw(`drop table ${table}`).execute(db);
  await sql.raw(`alter table ${table}__new rename to ${table}`).execute(db);
  for (const k of kept) await sql.raw(k.sql).execute(db);
  // The copy's inserts counted under the new table's name; the rename may or may not carry it over.
  await sql`delete from sqlite_sequence where name in (${table}, ${`${table}__new`})`.execute(db);
  if (seq.length) {
    await sql`insert into sqlite_sequence (name, seq) values (${table}, ${seq[0].seq})`.execute(db);
  }
}
