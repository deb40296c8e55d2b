import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * Whether a unique custom field's values are all in `custom_unique_values`
 * (`custom_field_definitions.unique_complete`): true when made unique at creation or over items
 * without two equal values; false when made unique over existing duplicates, of which only the first
 * item's value is kept there (setting `unique` never fails). `where customFields.<key> = …` reads
 * the unique values' index only when it is complete, so it never misses those older items.
 * Definitions made unique before this migration: complete when every item holding a value is there.
 */
export const uniqueComplete = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('custom_field_definitions')
      .addColumn('unique_complete', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
    if (dialect === 'postgres')
      await sql`comment on column custom_field_definitions.unique_complete is 'Whether every value of this unique field is in custom_unique_values (1), or it was made unique over existing duplicates (0)'`.execute(
        db,
      );
    const { rows } = await sql<{
      account_id: number;
      collection: string;
      key: string;
    }>`select account_id, collection, key from custom_field_definitions where is_unique = 1`.execute(db);
    for (const d of rows) {
      const held =
        dialect === 'postgres'
          ? sql`select count(*) as n from ${sql.table(d.collection)} where account_id = ${d.account_id} and custom_fields ? ${d.key}`
          : sql`select count(*) as n from ${sql.table(d.collection)} where account_id = ${d.account_id} and json_type(custom_fields, ${`$.${d.key}`}) is not null`;
      const items = Number(((await held.execute(db)).rows[0] as { n: number }).n);
      const kept = Number(
        (
          (
            await sql`select count(*) as n from custom_unique_values where account_id = ${d.account_id} and collection = ${d.collection} and key = ${d.key}`.execute(
              db,
            )
          ).rows[0] as { n: number }
        ).n,
      );
      if (kept !== items)
        await sql`update custom_field_definitions set unique_complete = 0 where account_id = ${d.account_id} and collection = ${d.collection} and key = ${d.key}`.execute(
          db,
        );
    }
  },
});
