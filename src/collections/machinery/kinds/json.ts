import type { TSchema } from '@sinclair/typebox';
import { oneColumn, orNull, ownColumn, scalar, type Kind, type ScalarOpts } from './kind.js';

/**
 * A structured value of its schema (a list of event types, a document's lines, working hours),
 * stored as JSON text: never filtered, sorted or summed, and written to answers by JSON.stringify.
 * References to items inside it are declared on the field (`references`) and remapped by an import.
 */
export const json: Kind = {
  noun: 'a JSON value',
  columns: ownColumn,
  toApi: () => orNull((v) => JSON.parse(v as string)),
  write: oneColumn((_f, v) => JSON.stringify(v)),
  restore: (field, value, row) => {
    row[field.column] = value === null || value === undefined ? null : JSON.stringify(value);
    return undefined;
  },
  untyped: true,
};

export const jsonFields = {
  /** A structured value of the given schema, stored as JSON text. */
  json: (column: string, schema: TSchema, opts: ScalarOpts = {}) => scalar('json', schema)(column, opts),
};
