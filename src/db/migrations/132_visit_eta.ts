import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/** A visit's `eta` (PRODUCT §18, `onMyWay`): epoch ms, or null. */
export const visitEta = (_dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('visits').addColumn('eta', 'bigint').execute();
  },
});
