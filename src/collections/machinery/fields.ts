import { Type, type TSchema } from '@sinclair/typebox';
import type { Executor } from '../../db/tx.js';

/**
 * Field declarations. Each carries its TypeBox schema (the single source for validation, the
 * `fields` catalogue, serialization and OpenAPI) and how it maps onto columns.
 */
export type ValueType = 'string' | 'integer' | 'number' | 'boolean' | 'flag' | 'time' | 'datetime';

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
  /** Unique in the account ('account') or in the whole service ('global'). */
  unique?: 'account' | 'global';
}

export interface ObjectField extends BaseField {
  kind: 'object';
  members: Record<string, ScalarField>;
}

export interface AssocField extends BaseField {
  kind: 'assoc';
  column: string;
  nullable?: boolean;
  /** Table the id points into; ids are always resolved inside the caller's account. */
  table: string;
  /** Column holding the account id in the target table ('id' for the accounts table itself). */
  accountColumn: string;
  /** Members shown with [*]: API name -> column (`nullable` when the column may hold null). */
  members: Record<string, { column: string; type: ValueType; nullable?: boolean }>;
  /** Extra condition a referenced row must meet (e.g. not deleted). */
  referenceFilter?: Record<string, unknown>;
}

export interface AssocListField extends BaseField {
  kind: 'assocList';
  /** Loads [{id, ...members}] lists for many items at once. */
  load(db: Executor, accountId: number, itemIds: number[], expand: boolean): Promise<Map<number, Record<string, unknown>[]>>;
  /** Replaces the list for one item; ids were already checked to exist in the account. */
  save(db: Executor, accountId: number, itemId: number, ids: number[]): Promise<void>;
  /** Table the ids point into (for the reference check). */
  table: string;
  /** Member names shown with [*] (for the OpenAPI document). */
  memberSchema: Record<string, TSchema>;
}

export interface WriteOnlyField extends BaseField {
  kind: 'writeOnly';
}

/** A read-only value derived at read time (a signed link), never stored: always readOnly. */
export interface ComputedField extends BaseField {
  kind: 'computed';
  /** Columns the value is derived from; selected whenever the field is. */
  columns: string[];
  /** One value per row, in order; async so it may read settings (a signing key) once per batch. */
  compute(db: Executor, ctx: import('./collection.js').AuthContext, rows: Record<string, unknown>[]): Promise<unknown[]>;
}

export type Field = ScalarField | ObjectField | AssocField | AssocListField | WriteOnlyField | ComputedField;

type ScalarOpts = Partial<Omit<ScalarField, 'kind' | 'column' | 'type' | 'schema'>> & { schema?: TSchema };

function scalar(type: ValueType, base: TSchema) {
  return (column: string, opts: ScalarOpts = {}): ScalarField => {
    const { schema, ...rest } = opts;
    const s = schema ?? base;
    return { kind: 'scalar', column, type, ...rest, valueSchema: s, schema: rest.nullable ? Type.Union([s, Type.Null()]) : s };
  };
}

const ISO_WITH_OFFSET = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';

export const f = {
  string: (column: string, opts: ScalarOpts & { maxLength?: number; minLength?: number; pattern?: string; format?: string } = {}) => {
    const { maxLength = 255, minLength, pattern, format, ...rest } = opts;
    return scalar('string', Type.String({ maxLength, minLength, pattern, format }))(column, rest);
  },
  text: (column: string, opts: ScalarOpts = {}) => scalar('string', Type.String({ maxLength: 10_000 }))(column, opts),
  integer: (column: string, opts: ScalarOpts & { minimum?: number; maximum?: number } = {}) => {
    const { minimum = INT32_MIN, maximum = INT32_MAX, ...rest } = opts;
    return scalar('integer', Type.Integer({ minimum, maximum }))(column, rest);
  },
  number: (column: string, opts: ScalarOpts & { minimum?: number; maximum?: number } = {}) => {
    const { minimum, maximum = 1e12, ...rest } = opts;
    return scalar('number', Type.Number({ minimum, maximum }))(column, rest);
  },
  boolean: (column: string, opts: ScalarOpts = {}) => scalar('boolean', Type.Boolean())(column, opts),
  /** An integer 1/0 flag (the spec's `active`). */
  flag: (column: string, opts: ScalarOpts = {}) => scalar('flag', Type.Union([Type.Literal(0), Type.Literal(1)]))(column, opts),
  /** An ISO 8601 date-time with offset, stored as text as given. */
  datetime: (column: string, opts: ScalarOpts = {}) =>
    scalar('datetime', Type.String({ pattern: ISO_WITH_OFFSET, format: 'date-time' }))(column, opts),
  /** A server-set time (epoch ms in the database, ISO 8601 in the API); always read-only. */
  time: (column: string, opts: ScalarOpts = {}) =>
    scalar('time', Type.String({ format: 'date-time' }))(column, { readOnly: true, ...opts }),
  /** A client-set instant: ISO 8601 with offset in the API, epoch ms in the database (compares across offsets). */
  instant: (column: string, opts: ScalarOpts = {}) =>
    scalar('time', Type.String({ pattern: ISO_WITH_OFFSET, format: 'date-time' }))(column, opts),
  /** A calendar date `YYYY-MM-DD`, stored as text (sorts and compares as text). */
  date: (column: string, opts: ScalarOpts = {}) =>
    scalar('string', Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date' }))(column, opts),
  enum: (column: string, values: readonly string[], opts: ScalarOpts = {}) =>
    scalar('string', Type.Union(values.map((v) => Type.Literal(v))))(column, opts),
  /** With `partial`, members may be left out (an address); the object is still written as a whole. */
  object: (members: Record<string, ScalarField>, opts: Partial<BaseField> & { partial?: boolean } = {}): ObjectField => {
    const { partial, ...rest } = opts;
    const member = (m: ScalarField) => (partial ? Type.Optional(m.schema) : m.schema);
    return {
      kind: 'object',
      members,
      schema: Type.Object(Object.fromEntries(Object.entries(members).map(([k, m]) => [k, member(m)])), { additionalProperties: false }),
      ...rest,
    };
  },
  assoc: (column: string, table: string, opts: Partial<Omit<AssocField, 'kind' | 'column' | 'table' | 'schema'>> = {}): AssocField => ({
    kind: 'assoc',
    column,
    table,
    accountColumn: 'account_id',
    members: {},
    ...opts,
    schema: opts.nullable ? Type.Union([AssocRef, Type.Null()]) : AssocRef,
  }),
  writeOnly: (schema: TSchema, opts: Partial<BaseField> = {}): WriteOnlyField => ({ kind: 'writeOnly', schema, ...opts }),
};

/**
 * Integer columns are PostgreSQL `integer` (int4) and ids `serial`: a value past this range would
 * fail the query there, so it is refused before any SQL, on SQLite too (one answer on both dialects).
 */
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;
/** The largest id any item can have. */
export const MAX_ID = INT32_MAX;
export const isItemId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_ID;

export const AssocRef = Type.Object({ id: Type.Integer({ minimum: 1, maximum: MAX_ID }) }, { additionalProperties: false });

/** The members every collection item has. */
export function standardFields(opts: { accountRequired?: boolean; deleted?: boolean } = {}): Record<string, Field> {
  const fields: Record<string, Field> = {
    account: f.assoc('account_id', 'accounts', {
      accountColumn: 'id',
      required: opts.accountRequired,
      members: {
        companyName: { column: 'company_name', type: 'string' },
        licenses: { column: 'licenses', type: 'integer' },
        countryCode: { column: 'country_code', type: 'integer' },
        companyAccountCode: { column: 'company_account_code', type: 'string', nullable: true },
      },
    }),
    created: f.time('created'),
    modified: f.time('modified'),
  };
  if (opts.deleted !== false) fields.deleted = f.boolean('deleted', { default: false });
  return fields;
}
