import { Type } from '@sinclair/typebox';
import { oneColumn, orNull, ownColumn, restoreOne, scalar, type Kind, type ScalarOpts } from './kind.js';

/** true or false, stored as 1 or 0 (both databases alike); compared with = and != only. */
export const boolean: Kind = {
  noun: 'a boolean',
  columns: ownColumn,
  toApi: () => orNull((v) => v === 1 || v === true),
  write: oneColumn((_f, v) => (v ? 1 : 0)),
  restore: restoreOne((_f, v) => (typeof v === 'boolean' ? { value: v ? 1 : 0 } : { why: 'must be true or false' })),
  compare: {
    text: false,
    ordered: false,
    bind: (v) => (typeof v === 'boolean' ? { value: v ? 1 : 0 } : { why: 'needs true or false' }),
  },
};

export const booleanFields = {
  boolean: (column: string, opts: ScalarOpts = {}) => scalar('boolean', Type.Boolean())(column, opts),
};
