import { Type } from '@sinclair/typebox';
import { asIs, oneColumn, ownColumn, restoreOne, scalar, type Kind, type ScalarOpts } from './kind.js';

/** Text: stored and shown as given; `~` finds a substring; a `format: 'date'` text is a calendar date. */
export const string: Kind = {
  noun: 'text',
  columns: ownColumn,
  toApi: () => asIs,
  write: oneColumn((_f, v) => v),
  restore: restoreOne((_f, v) => (typeof v === 'string' ? { value: v } : { why: 'must be a string' })),
  compare: {
    text: true,
    ordered: true,
    bind: (v) => (typeof v === 'string' ? { value: v } : { why: 'needs a quoted string' }),
  },
  date: (field) => ((field.valueSchema as { format?: string }).format === 'date' ? 'date' : undefined),
};

export const textFields = {
  string: (
    column: string,
    opts: ScalarOpts & { maxLength?: number; minLength?: number; pattern?: string; format?: string } = {},
  ) => {
    const { maxLength = 255, minLength, pattern, format, ...rest } = opts;
    return scalar('string', Type.String({ maxLength, minLength, pattern, format }))(column, rest);
  },
  text: (column: string, opts: ScalarOpts & { minLength?: number } = {}) => {
    const { minLength, ...rest } = opts;
    return scalar('string', Type.String({ minLength, maxLength: 10_000 }))(column, rest);
  },
  /** A calendar date `YYYY-MM-DD`, stored as text (sorts and compares as text). */
  date: (column: string, opts: ScalarOpts = {}) =>
    scalar('string', Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date' }))(column, opts),
  enum: (column: string, values: readonly string[], opts: ScalarOpts = {}) =>
    scalar('string', Type.Union(values.map((v) => Type.Literal(v))))(column, opts),
};
