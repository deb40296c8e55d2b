import { Type } from '@sinclair/typebox';
import { scalar, type BindColumn, type Kind, type ScalarOpts } from './kind.js';
import { number } from './number.js';

/**
 * Integer columns are PostgreSQL `integer` (int4) and ids `serial`: a value past this range would
 * fail the query there, so it is refused before any SQL, on SQLite too (one answer on both dialects).
 */
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;

/** What an integer column stores (int4, or bigint for wide columns, read back as safe integers). */
const rangeOf = (col: BindColumn): [number, number] =>
  col.wide ? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] : [INT32_MIN, INT32_MAX];

/**
 * A whole number of the column's range: stored, shown and restored as a number is (a driver's
 * bigint text is shown as a number), compared as an integer, summed exactly.
 */
export const integer: Kind = {
  ...number,
  noun: 'an integer',
  compare: {
    text: false,
    ordered: true,
    bigint: true,
    bind: (v, col) => {
      const [min, max] = rangeOf(col);
      return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
        ? { value: v }
        : { why: typeof v === 'number' ? `needs an integer from ${min} to ${max}` : 'needs a number' };
    },
  },
  sum: 'exact',
};

export const integerFields = {
  integer: (column: string, opts: ScalarOpts & { minimum?: number; maximum?: number } = {}) => {
    const { minimum = INT32_MIN, maximum = INT32_MAX, ...rest } = opts;
    return scalar('integer', Type.Integer({ minimum, maximum }))(column, rest);
  },
};
