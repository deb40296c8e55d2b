import { Type, type TSchema } from '@sinclair/typebox';
import type { ApiErrorBody } from '../../../errors.js';

/**
 * A value kind: how one kind of value (text, an integer, money, a point on Earth, …) is stored,
 * shown, written, filtered, summed and carried through an export, written once in its own file of
 * this folder (docs/design.md, "Where a value kind goes"). Every kind is an entry of `KINDS`
 * (kinds/index.ts), a record over `ValueType`: a type without its kind does not compile. The
 * machinery asks the kind and never the tag: validate.ts, present.ts, read.ts, filter.ts,
 * summary*.ts and transfer.ts hold no `type ===`.
 *
 * This file is the leaf of the folder: the scalar field's declaration and the interface; the
 * kinds import it and nothing of the machinery imports back into them but fields.ts.
 */
export type ValueType =
  'string' | 'integer' | 'number' | 'decimal' | 'boolean' | 'flag' | 'time' | 'datetime' | 'json' | 'location';

export interface BaseField {
  /** The write schema of the value (TypeBox). */
  schema: TSchema;
  required?: boolean;
  readOnly?: boolean;
  /** Returned only with fields=* (not in the default field set). */
  extended?: boolean;
  description?: string;
}

export interface ScalarField extends BaseField {
  kind: 'scalar';
  /** The schema of a non-null value (schema itself admits null when the field is nullable). */
  valueSchema: TSchema;
  column: string;
  type: ValueType;
  nullable?: boolean;
  default?: unknown;
  /**
   * Unique in the account ('account'), or in the whole service: such values live in a table of
   * their own without `account_id` (src/db/migrations/scheme.ts), the value in a column named as
   * this field's and the item's id in `id` (a user's login: `logins`, `user_id`), which the
   * collection's rules keep.
   */
  unique?: 'account' | { table: string; id: string };
  /**
   * The value is unique together with other columns (a custom field definition's `key`, per
   * collection in the account) by a unique index that the collection's own rules check first: when
   * the index refuses a row anyway (two items of one batch, concurrent writes), the failure names
   * this field (write/apply.ts uniqueField) rather than `id`.
   */
  uniqueIndex?: boolean;
  /** A `location` (`{lat, lng}`): `column` holds the latitude, this the longitude (kinds/location.ts). */
  lngColumn?: string;
  /** The item's custom fields (PRODUCT §12): typed by the account's definitions (src/collections/machinery/custom.ts). */
  customFields?: boolean;
  /**
   * A `decimal` (kinds/decimal.ts): an exact decimal stored as an integer count of 10^-scale
   * (money, quantities, percentages), written and shown as a JSON number, never held as a binary
   * fraction on the way; a value with more decimals, non-finite or past ±1e9 is refused.
   */
  scale?: number;
  /** Money: its decimals are the account currency's too (checked by checkCurrencyDecimals). */
  money?: boolean;
  /**
   * Text whose `~` is answered through a trigram index (issue 51; migration 140 and the later
   * ones that call `addContainsIndex`): the member lists are filtered by, at some cost to writes.
   */
  contains?: boolean;
  /**
   * A JSON value that names items: path → target collection of the `{id}` found there. A path is
   * steps: a member's name, `*` (each member of an object) or `[]` (each element of an array), as
   * `'[].taxRate'` (a document's lines: `[{taxRate: {id}, …}]`), `'[]'` (a list of `{id}`),
   * `'[].steps[].visit'`, `'*[]'` (each member's elements: a form's photo answers). What is not
   * there, or null, names nothing; past a `*`, neither does a value that is no object (an answer's
   * text). An account's export orders the targets first and its import remaps them
   * (src/collections/machinery/transfer.ts).
   */
  references?: Record<string, string>;
  /** The value's own checks instead of its schema's (a document's lines name `lines[i].member`). */
  check?(value: unknown, name: string): ApiErrorBody[];
}

/** What a builder takes besides its column: the field's options, and a schema replacing the kind's. */
export type ScalarOpts = Partial<Omit<ScalarField, 'kind' | 'column' | 'type' | 'schema'>> & { schema?: TSchema };

/** A scalar field of `type` whose non-null values match `base` (or the schema the options give). */
export function scalar(type: ValueType, base: TSchema) {
  return (column: string, opts: ScalarOpts = {}): ScalarField => {
    const { schema, ...rest } = opts;
    const s = schema ?? base;
    return {
      kind: 'scalar',
      column,
      type,
      ...rest,
      valueSchema: s,
      schema: rest.nullable ? Type.Union([s, Type.Null()]) : s,
    };
  };
}

/** An ISO 8601 date-time with a zone offset (`Z` or `±hh:mm`). */
export const ISO_WITH_OFFSET = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';

/** A stored value as the API shows it. */
export type Convert = (v: unknown) => unknown;
/** A conversion of stored values, null and undefined being null. */
export const orNull =
  (convert: Convert): Convert =>
  (v) =>
    v === null || v === undefined ? null : convert(v);
/** A value shown as stored: what present.ts copies without a call. */
export const asIs: Convert = (v) => (v === undefined ? null : v);

/** What a filter literal is bound as, or why the member cannot be compared with it. */
export type Bound = { value: string | number } | { why: string };

/** What binding a literal may need of its column besides the kind (collection.ts FilterColumn). */
export interface BindColumn {
  /** A bigint column (an integer declared past int4, such as a file's size). */
  wide?: boolean;
  scale?: number;
  money?: boolean;
}

/** How a filter, a sort and a group compare a kind's values (absent: they do not). */
export interface Comparison {
  /** `~` and `!~` (a case-insensitive substring) apply: the value is text. */
  text: boolean;
  /** `<`, `<=`, `>`, `>=` apply (and sorting means something); else only `=` and `!=`. */
  ordered: boolean;
  /** The literal is bound cast to bigint, so the comparison never depends on how a driver types it. */
  bigint?: boolean;
  /**
   * A `where` literal as the column holds it, or why it cannot be compared (the member's name is
   * put before it). `exponent`: the account currency's decimals, when the account is known.
   */
  bind(value: string | number | boolean, col: BindColumn, exponent: number | undefined): Bound;
}

/** How an export's member is put back into its columns: undefined when done, else why it cannot be. */
export type Restore = (field: ScalarField, value: unknown, row: Record<string, unknown>) => string | undefined;

export interface Kind {
  /** What a value of this kind is, in a refusal (`'active' is a boolean; use = or !=`). */
  noun: string;
  /** The columns one value is kept in, in the order `toApi` takes them (a location: lat, lng). */
  columns(field: ScalarField): readonly string[];
  /** The stored columns' values as the API shows them, null for none: made once per field, called per row. */
  toApi(field: ScalarField): (...stored: unknown[]) => unknown;
  /** A valid API value (null included) into its columns of a row being written. */
  write(field: ScalarField, value: unknown, row: Record<string, unknown>): void;
  /**
   * Why a non-null value is invalid, checked before its schema so the refusal says what is wrong
   * (a decimal with too many digits, a location without `lng`), or undefined.
   */
  problem?(field: ScalarField, value: unknown): string | undefined;
  /** An exported value (null included) back into its columns, or why it cannot be (an account's import). */
  restore: Restore;
  /** Filters, sorts and groups: how; absent when the kind is not compared (stored JSON, a location). */
  compare?: Comparison;
  /** Summaries: `sum` and `avg` apply, exactly in integers (`exact`) or as doubles. */
  sum?: 'exact' | 'double';
  /** Summaries: how the value holds a date, when it does (`min`/`max` and periods read it). */
  date?(field: ScalarField): 'ms' | 'text' | 'date' | undefined;
  /** Answers write the value with JSON.stringify: its schema does not type its members (stored JSON). */
  untyped?: boolean;
}

/** The one column of a single-column kind. */
export const ownColumn = (field: ScalarField): readonly string[] => [field.column];
/** A single-column kind's write: its column set to `toColumn(value)`, null for none. */
export const oneColumn =
  (toColumn: (field: ScalarField, v: unknown) => unknown) =>
  (field: ScalarField, value: unknown, row: Record<string, unknown>): void => {
    row[field.column] = value === null || value === undefined ? null : toColumn(field, value);
  };
/** A single-column kind's restore: null, or the value checked and converted (`why` when it fails). */
export const restoreOne =
  (convert: (field: ScalarField, v: unknown) => { value: unknown } | { why: string }): Restore =>
  (field, value, row) => {
    if (value === null || value === undefined) {
      row[field.column] = null;
      return undefined;
    }
    const out = convert(field, value);
    if ('why' in out) return out.why;
    row[field.column] = out.value;
    return undefined;
  };
