import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withId, withTimes, type AnyDb } from './columns.js';

export const core = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await withTimes(
      withId(db.schema.createTable('accounts'), dialect)
        .addColumn('company_name', 'text', (c) => c.notNull())
        .addColumn('licenses', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('country_code', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('company_account_code', 'text'),
    ).execute();

    await withId(db.schema.createTable('roles'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('roles_account').on('roles').columns(['account_id', 'id']).execute();

    await withTimes(
      withId(db.schema.createTable('users'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('role_id', 'integer', (c) => c.notNull().references('roles.id'))
        .addColumn('login', 'text', (c) => c.unique())
        .addColumn('password_hash', 'text')
        .addColumn('first_name', 'text', (c) => c.notNull())
        .addColumn('last_name', 'text', (c) => c.notNull())
        .addColumn('company_name', 'text')
        .addColumn('email', 'text')
        .addColumn('phone', 'text')
        .addColumn('mobile', 'text', (c) => c.notNull())
        .addColumn('hourly_rate', 'double precision', (c) => c.notNull().defaultTo(0))
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('deleted', 'integer', flag)
        .addColumn('colour', 'text')
        .addColumn('is_assignable', 'integer', flag)
        .addColumn('status_message', 'text')
        .addColumn('status_timestamp', 'text'),
    ).execute();
    await db.schema.createIndex('users_account_id').on('users').columns(['account_id', 'id']).execute();

    await withTimes(
      withId(db.schema.createTable('workgroups'), dialect)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('deleted', 'integer', flag),
    ).execute();
    await db.schema
      .createIndex('workgroups_account_name')
      .unique()
      .on('workgroups')
      .columns(['account_id', 'name'])
      .execute();

    await db.schema
      .createTable('workgroup_members')
      .addColumn('account_id', 'integer', (c) => c.notNull())
      .addColumn('workgroup_id', 'integer', (c) => c.notNull().references('workgroups.id').onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('workgroup_members_pk', ['workgroup_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('workgroup_members_user')
      .on('workgroup_members')
      .columns(['account_id', 'user_id'])
      .execute();

    await withId(db.schema.createTable('oauth_clients'), dialect)
      .addColumn('client_id', 'text', (c) => c.notNull().unique())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('allow_permission_choice', 'integer', flag)
      .addColumn('certified', 'integer', flag)
      .addColumn('revoked', 'integer', flag)
      .addColumn('created', 'bigint', (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('oauth_codes'), dialect)
      .addColumn('code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('account_id', 'integer', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text')
      .addColumn('code_challenge', 'text')
      .addColumn('code_challenge_method', 'text')
      .addColumn('offline', 'integer', flag)
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('replayed_at', 'bigint')
      .addColumn('created', 'bigint', (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('oauth_tokens'), dialect)
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('account_id', 'integer', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('code_id', 'integer')
      .addColumn('refresh_id', 'integer')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked', 'integer', flag)
      .addColumn('created', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oauth_tokens_code').on('oauth_tokens').column('code_id').execute();
    await db.schema.createIndex('oauth_tokens_user').on('oauth_tokens').column('user_id').execute();

    await withId(db.schema.createTable('auth_sessions'), dialect)
      .addColumn('session_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('account_id', 'integer', (c) => c.notNull())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('created', 'bigint', (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('login_attempts'), dialect)
      .addColumn('login', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('login_attempts_login').on('login_attempts').columns(['login', 'at']).execute();

    await db.schema
      .createTable('settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
    // A per-installation secret for signed URLs, shared by every worker through the database.
    await db.insertInto('settings').values({ key: 'signing_key', value: randomHex() }).execute();
  },
});

function randomHex(): string {
  return [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, '0')).join('');
}
