import { Type } from '@sinclair/typebox';
import { oneColumn, orNull, ownColumn, restoreOne, scalar, type Kind, type ScalarOpts } from './kind.js';

/** A measurement kept as a double (a latitude in a ping, a distance): no exact decimals promised. */
export const number: Kind = {
  noun: 'a number',
  columns: ownColumn,
  toApi: () => orNull(Number),
  write: oneColumn((_f, v) => v),
  restore: restoreOne((_f, v) =>
    typeof v === 'number' && Number.isFinite(v) ? { value: v } : { why: 'must be a number' },
  ),
  compare: {
    text: false,
    ordered: true,
    bind: (v) => (typeof v === 'number' ? { value: v } : { why: 'needs a number' }),
  },
  sum: 'double',
};

export const numberFields = {
  number: (column: string, opts: ScalarOpts & { minimum?: number; maximum?: number } = {}) => {
    const { minimum, maximum = 1e12, ...rest } = opts;
    return scalar('number', Type.Number({ minimum, maximum }))(column, rest);
  },
};
