import { untyped, type Executor } from './runner.js';

/*
 * Row counts per account and table, kept by triggers in the same transaction as every change
 * (cascades included) in `row_counts`, one row per slot: the count is the sum of `value`, and the
 * sum of `version` moves on every insert, update and delete (the count cache of
 * src/collections/machinery/count.ts is keyed by it). On PostgreSQL a transaction writes the slot
 * of its connection (`fsm.slot`, see src/db/index.ts), so concurrent writers of one account never
 * wait on a count; SQLite has one writer and slot 0. The triggers are made by the migrations
 * (src/db/migrations/scheme.ts `counted`) for the tables whose collection is declared `counted`;
 * src/db/derived.test.ts fails when a declaration asks for one no migration made.
 */

const slots = (db: Executor, table: string, accountId: number) =>
  untyped(db).selectFrom('row_counts').where('account_id', '=', accountId).where('tbl', '=', table);

/**
 * The count and change version of a counted table in an account, as one row (`value`, `version`):
 * the sums over the table's slots in `row_counts` (migration 012). `version` is null before the
 * account's first change to the table. `accountId` may be a compiled statement's slot.
 */
export const rowCount = (db: Executor, table: string, accountId: number) =>
  slots(db, table, accountId).select((eb) => [
    eb.fn.coalesce(eb.fn.sum<number>('value'), eb.lit(0)).as('value'),
    eb.fn.sum<number>('version').as('version'),
  ]);

/** The count alone (0 before the account's first row), as a subquery. */
export const rowCountValue = (db: Executor, table: string, accountId: number) =>
  slots(db, table, accountId).select((eb) => eb.fn.coalesce(eb.fn.sum<number>('value'), eb.lit(0)).as('value'));

/** The change version alone, as a subquery. */
export const rowVersion = (db: Executor, table: string, accountId: number) =>
  slots(db, table, accountId).select((eb) => eb.fn.sum<number>('version').as('version'));
