import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Remembered consent (PRODUCT §1, docs/oauth.md): one row per owner and client once the owner
 * allowed it. `asked` is the client's permission set the owner saw, `granted` what they kept
 * ticked; the consent holds only while the client still asks exactly `asked`. Revoking the app
 * (connected applications, /oauth2/revoke) deletes the row; a physically deleted user takes it along.
 */
export const oauthConsents = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('oauth_consents')
      .addColumn('account_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('asked', 'text', (c) => c.notNull())
      .addColumn('granted', 'text', (c) => c.notNull())
      .addColumn('created', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_consents_pkey', ['account_id', 'user_id', 'client_id'])
      .addForeignKeyConstraint(
        'oauth_consents_user_id_fkey',
        ['account_id', 'user_id'],
        'users',
        ['account_id', 'id'],
        (k) => k.onDelete('cascade'),
      )
      .execute();
    if (dialect === 'postgres') {
      await sql
        .raw(
          `comment on column oauth_consents.asked is 'JSON text: the client''s permissions when the owner allowed it, sorted; the consent holds while the client asks exactly these'`,
        )
        .execute(db);
      await sql
        .raw(`comment on column oauth_consents.granted is 'JSON text: the permissions the owner kept ticked'`)
        .execute(db);
    }
  },
});
