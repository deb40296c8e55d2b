import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Public clients (PRODUCT §13, RFC 8252): `public` marks a client that keeps no secret and
 * authenticates by `client_id` alone; `replaced_at` marks a refresh token ended by rotation, so
 * presenting it again is recognised as reuse and ends its whole grant (RFC 9700 §4.14.2).
 */
export const publicClients = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('oauth_clients')
      .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('oauth_tokens').addColumn('replaced_at', 'bigint').execute();
    if (dialect === 'postgres') {
      await sql
        .raw(
          `comment on column oauth_clients.is_public is '1: a public client (no secret, PKCE required, refresh tokens rotate)'`,
        )
        .execute(db);
      await sql
        .raw(
          `comment on column oauth_tokens.replaced_at is 'When rotation replaced this refresh token (ms); presenting it again revokes its grant'`,
        )
        .execute(db);
    }
  },
});
