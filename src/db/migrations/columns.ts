import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import type { Dialect } from '../index.js';

/** The few column shapes that differ between the dialects, written once for every migration. */
export function withId<T extends string>(table: CreateTableBuilder<T, never>, dialect: Dialect) {
  return dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

export const flag = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(0);

/** Adds created/modified (epoch ms) columns. */
export function withTimes<T extends string, C extends string>(table: CreateTableBuilder<T, C>) {
  return table.addColumn('created', 'bigint', (c) => c.notNull()).addColumn('modified', 'bigint', (c) => c.notNull());
}

export type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
