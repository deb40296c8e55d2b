import { boolean } from './boolean.js';
import { datetime } from './datetime.js';
import { decimal } from './decimal.js';
import { flag } from './flag.js';
import { integer } from './integer.js';
import { json } from './json.js';
import type { Convert, Kind, ScalarField, ValueType } from './kind.js';
import { location } from './location.js';
import { number } from './number.js';
import { string } from './text.js';
import { time } from './time.js';

export type { Bound, Comparison, Kind } from './kind.js';
export { asIs } from './kind.js';
export { isoTime } from './time.js';

/** Every value type's kind: a type added to ValueType without one is a compile error here. */
export const KINDS: { readonly [T in ValueType]: Kind } = {
  string,
  datetime,
  integer,
  number,
  decimal,
  boolean,
  flag,
  time,
  json,
  location,
};

export const kindOf = (field: { type: ValueType }): Kind => KINDS[field.type];

/** The columns a field's value is kept in (a location's two). */
export const columnsOf = (field: ScalarField): readonly string[] => KINDS[field.type].columns(field);

/** A single-column field's stored value as the API shows it: made once, called per row. */
export const converterOf = (field: Pick<ScalarField, 'type' | 'scale'>): Convert =>
  KINDS[field.type].toApi(field as ScalarField) as Convert;

/** A stored value as the API shows it: 0/1 as booleans, epoch ms as ISO 8601, decimals as numbers. */
export const toApi = (field: Pick<ScalarField, 'type' | 'scale'>, v: unknown): unknown => converterOf(field)(v);
