import { Type } from '@sinclair/typebox';
import { integer } from './integer.js';
import { scalar, type Kind, type ScalarOpts } from './kind.js';

/**
 * An integer 1/0 flag (the spec's `active`, §2.3): shown as the number, compared as an integer,
 * and with true and false too, as every boolean is.
 */
export const flag: Kind = {
  ...integer,
  noun: 'a flag',
  compare: {
    ...integer.compare!,
    bind: (v, col, exponent) =>
      typeof v === 'boolean'
        ? { value: v ? 1 : 0 }
        : typeof v === 'number'
          ? integer.compare!.bind(v, col, exponent)
          : { why: 'needs 0, 1, true or false' },
  },
  sum: undefined,
};

export const flagFields = {
  flag: (column: string, opts: ScalarOpts = {}) =>
    scalar('flag', Type.Union([Type.Literal(0), Type.Literal(1)]))(column, opts),
};
