import { Type } from '@sinclair/typebox';
import { moneyProblem, scaledProblem, toScaled, toScaledNearest } from '../money.js';
import {
  oneColumn,
  orNull,
  ownColumn,
  restoreOne,
  scalar,
  type Kind,
  type ScalarField,
  type ScalarOpts,
} from './kind.js';

const scaleOf = (field: ScalarField): number => field.scale!;

/**
 * An exact decimal (PRODUCT §9; the arithmetic and why it is exact: machinery/money.ts): money,
 * quantities, percentages, stored as an integer count of 10^-scale and written and shown as a JSON
 * number. Money (`money: true`, scale 4) carries at most the account currency's decimals.
 */
export const decimal: Kind = {
  noun: 'a number',
  columns: ownColumn,
  toApi: (field) => {
    const d = 10 ** scaleOf(field);
    return orNull((v) => Number(v) / d);
  },
  // Money with more decimals than kept fails its currency check before anything is written.
  write: oneColumn((field, v) =>
    field.money ? toScaledNearest(v as number, scaleOf(field)) : toScaled(v as number, scaleOf(field)),
  ),
  // The number's own digits, before the schema's bounds; money's decimals are the account
  // currency's too, which its collection checks (checkCurrencyDecimals).
  problem: (field, v) => (field.money ? moneyProblem(v) : scaledProblem(v, scaleOf(field))),
  restore: restoreOne((field, v) => {
    const why = scaledProblem(v, scaleOf(field));
    return why ? { why } : { value: toScaled(v as number, scaleOf(field)) };
  }),
  compare: {
    text: false,
    ordered: true,
    bind: (v, col, exponent) => {
      if (typeof v !== 'number') return { why: 'needs a number' };
      // Never rounded: a money literal with more decimals than the currency has is refused, as
      // such an amount is when written (PRODUCT §9).
      const money = col.money && exponent !== undefined;
      const why = scaledProblem(v, col.scale!, money ? exponent : col.scale);
      if (why) return { why: `${why}${money ? " (the account's currency)" : ''}` };
      return { value: toScaled(v, col.scale!) };
    },
  },
  sum: 'exact',
};

export const decimalFields = {
  /** An amount in the account's currency (money.ts: stored in 10^-4 units; at most ±1e9). */
  money: (column: string, opts: ScalarOpts & { minimum?: number } = {}) => {
    const { minimum = -1e9, ...rest } = opts;
    return { ...scalar('decimal', Type.Number({ minimum, maximum: 1e9 }))(column, rest), scale: 4, money: true };
  },
  /** An exact decimal of `scale` decimals within [minimum, maximum] (a quantity: 3, a percentage: 4). */
  decimal: (
    column: string,
    scale: number,
    opts: ScalarOpts & { minimum?: number; maximum?: number; positive?: boolean } = {},
  ) => {
    const { minimum = -1e9, maximum = 1e9, positive, ...rest } = opts;
    const bounds = positive ? { exclusiveMinimum: 0, maximum } : { minimum, maximum };
    return { ...scalar('decimal', Type.Number(bounds))(column, rest), scale };
  },
};
