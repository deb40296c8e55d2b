import { sql, type SqlBool } from 'kysely';
import { dialectOf, execute, insertRows, query, slot, untyped, type Executor } from '../../db/runner.js';
import type { Collection, Row } from './collection.js';

/**
 * Custom fields' statements (custom.ts keeps their rules): the account's definitions, the unique
 * values of `custom_unique_values`, and the items' stored values as a definition's change reads
 * and rewrites them.
 */

const DEFINITIONS = 'custom_field_definitions';
const UNIQUE = 'custom_unique_values';

/** The account's definitions of a collection, deleted ones included, as stored. */
export function definitionRows(db: Executor, accountId: number, collection: string): Promise<Row[]> {
  return query<Row>(
    db,
    'customFieldDefinitions|of',
    () =>
      untyped(db)
        .selectFrom(DEFINITIONS)
        .select(['id', 'key', 'type', 'options', 'is_required', 'is_unique', 'unique_complete', 'deleted'])
        .where('account_id', '=', slot<number>('account'))
        .where('collection', '=', slot<string>('collection'))
        .$castTo<Row>(),
    { account: accountId, collection },
  );
}

/** Frees the unique values of these items (all their keys, or one key's). */
export async function freeItemValues(
  db: Executor,
  accountId: number,
  collection: string,
  items: number[],
  key?: string,
): Promise<void> {
  if (!items.length) return;
  await untyped(db)
    .deleteFrom(UNIQUE)
    .where('account_id', '=', accountId)
    .where('collection', '=', collection)
    .$if(key !== undefined, (q) => q.where('key', '=', key!))
    .where('item_id', 'in', items)
    .execute();
}

/** Frees a key's values held by items that are gone (deleted with another, by a cascade). */
export async function freeOrphanedValues(
  db: Executor,
  c: Collection,
  accountId: number,
  key: string,
  values: string[],
): Promise<void> {
  await untyped(db)
    .deleteFrom(UNIQUE)
    .where('account_id', '=', accountId)
    .where('collection', '=', c.name)
    .where('key', '=', key)
    .where('value', 'in', values)
    .where((eb) =>
      eb.not(
        eb.exists(
          untyped(db)
            .selectFrom(c.table)
            .select('id')
            .where('account_id', '=', accountId)
            .whereRef('id', '=', `${UNIQUE}.item_id`),
        ),
      ),
    )
    .execute();
}

/** Takes unique values for items in one statement; those another item holds are skipped. Answers the ones taken. */
export function takeUniqueValues(
  db: Executor,
  rows: { account_id: number; collection: string; key: string; value: string; item_id: number }[],
) {
  return insertRows<{ key: string; value: string }>(db, UNIQUE, rows, ['key', 'value'], {
    skipConflictsOn: ['account_id', 'collection', 'key', 'value'],
  });
}

/**
 * The term `the item is the one holding this unique value`: a scalar subquery gives its id, with
 * the account said as an equality too, so PostgreSQL seeks (account_id, id).
 */
export const itemHoldingTerm = (c: Collection, accountId: number, key: string, value: string) =>
  sql<SqlBool>`(${sql.ref(`${c.table}.account_id`)} = ${accountId} and ${sql.ref(`${c.table}.id`)} = (select item_id from ${sql.table(UNIQUE)} where account_id = ${accountId} and collection = ${c.name} and key = ${key} and value = ${value}))`;

/** Every item's stored custom values of a collection of the account, in id order. */
export function storedCustomValues(db: Executor, table: string, accountId: number): Promise<Row[]> {
  return execute<Row>(
    db,
    untyped(db)
      .selectFrom(table)
      .select(['id', 'custom_fields'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .$castTo<Row>(),
  );
}

/**
 * Marks a unique definition's values taken (`rows`, first come first kept, 500 a statement) and
 * whether every one was: only then can filters read the index alone.
 */
export async function takeExistingValues(
  db: Executor,
  accountId: number,
  collection: string,
  key: string,
  rows: { account_id: number; collection: string; key: string; value: string; item_id: unknown }[],
): Promise<void> {
  let kept = 0;
  for (let i = 0; i < rows.length; i += 500)
    kept += (
      await untyped(db)
        .insertInto(UNIQUE)
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.doNothing())
        .returning('item_id')
        .execute()
    ).length;
  await untyped(db)
    .updateTable(DEFINITIONS)
    .set({ unique_complete: kept === rows.length ? 1 : 0 })
    .where('account_id', '=', accountId)
    .where('collection', '=', collection)
    .where('key', '=', key)
    .execute();
}

/** Frees every value of a key (its definition is no longer unique). */
export async function freeKey(db: Executor, accountId: number, collection: string, key: string): Promise<void> {
  await untyped(db)
    .deleteFrom(UNIQUE)
    .where('account_id', '=', accountId)
    .where('collection', '=', collection)
    .where('key', '=', key)
    .execute();
}

/** Moves a table's change version for the account: its remembered answers are forgotten. */
export async function bumpVersion(db: Executor, accountId: number, table: string): Promise<void> {
  await sql`update row_counts set version = version + 1 where account_id = ${accountId} and tbl = ${table}`.execute(db);
}

/** A page of the items that hold a value for `key`, after id `after`, with their searched columns. */
export function itemsHolding(
  db: Executor,
  c: Collection,
  accountId: number,
  key: string,
  columns: string[],
  after: number,
  limit: number,
): Promise<Row[]> {
  const member = dialectOf(db).jsonMember(sql.ref(`${c.table}.custom_fields`), key, 'text');
  return execute<Row>(
    db,
    untyped(db)
      .selectFrom(c.table)
      .select(['id', 'custom_fields', 'search_text', ...columns])
      .where('account_id', '=', accountId)
      .where('id', '>', after)
      .where(sql<SqlBool>`${member} is not null`)
      .orderBy('id')
      .limit(limit)
      .$castTo<Row>(),
  );
}

/** An item's new searched text. */
export async function setSearchText(
  db: Executor,
  table: string,
  accountId: number,
  id: number,
  text: string,
): Promise<void> {
  await untyped(db)
    .updateTable(table)
    .set({ search_text: text })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}
