import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Who runs a client application (`fsm clients create --publisher`), shown on the consent page
 * beside its name so the owner knows whom they give access to. Null: not stated.
 * (007 and 008 are other branches' migrations.)
 */
export const clientPublisher = (_dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('oauth_clients').addColumn('publisher', 'text').execute();
  },
});
