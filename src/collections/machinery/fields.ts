/**
 * Field declarations. Each carries its TypeBox schema (the single source for validation, the
 * `fields` catalogue, serialization and OpenAPI) and how it maps onto columns.
 * A scalar field's value kind (its storage, conversions, filters, summaries, export) lives in
 * kinds/, one file per kind.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { Executor } from '../../db/tx.js';
import { booleanFields } from './kinds/boolean.js';
import { datetimeFields } from './kinds/datetime.js';
import { decimalFields } from './kinds/decimal.js';
import { flagFields } from './kinds/flag.js';
import { INT32_MAX, integerFields } from './kinds/integer.js';
import { jsonFields } from './kinds/json.js';
import type { BaseField, ScalarField, ScalarOpts } from './kinds/kind.js';
import { locationFields } from './kinds/location.js';
import { numberFields } from './kinds/number.js';
import { textFields } from './kinds/text.js';
import { timeFields } from './kinds/time.js';

export type { BaseField, ScalarField, ScalarOpts, ValueType } from './kinds/kind.js';
export { INT32_MAX, INT32_MIN } from './kinds/integer.js';
export { locationProblem } from './kinds/location.js';

export interface ObjectField extends BaseField {
  kind: 'object';
  members: Record<string, ScalarField>;
}

/**
 * What an association points at: a collection by name (resolved by the registry), or one of the
 * tables behind every account that the API does not serve as a collection (accounts, roles).
 */
export interface Target {
  table: string;
  /** Column holding the account id in the target table ('id' for the accounts table itself). */
  accountColumn: string;
  fields: Record<string, Field>;
}

export interface AssocField extends BaseField {
  kind: 'assoc';
  column: string;
  nullable?: boolean;
  /** The target's name: a collection of the registry, or a key of REFERENCE_TABLES. */
  target: string;
  /** Names of the target's scalar fields shown with [*]; their columns and types are the target's own. */
  memberNames: readonly string[];
  /** Resolved by the registry from `target`: its table, account column and the members' declarations. */
  table: string;
  accountColumn: string;
  members: Record<string, ScalarField>;
  /** Extra condition a referenced row must meet (e.g. not deleted). */
  referenceFilter?: Record<string, unknown>;
  /**
   * The target collection itself, when it is one (set by the registry): `where` and `sort` on its
   * default fields (`client.name`) read its declaration, permission and scope (machinery/filter.ts).
   */
  targetCollection?: import('./collection.js').Collection;
  /**
   * What the database does to this item when the referenced row is physically deleted (the
   * foreign key's ON DELETE, checked against the live schema by a test): the write pipeline
   * reports those rows as changed too.
   */
  onDelete: 'cascade' | 'set null' | 'restrict';
}

export interface AssocListField extends BaseField {
  kind: 'assocList';
  /** The listed items' collection (resolved by the registry into `table` and `members`). */
  target: string;
  memberNames: readonly string[];
  table: string;
  members: Record<string, ScalarField>;
  /** The link table, with account_id and the two id columns. */
  through: string;
  /** Column of `through` holding the id of the item that owns the list. */
  own: string;
  /** Column of `through` holding the ids listed. */
  other: string;
  /**
   * The list is the owner's data only: the listed items have no member that shows it (a user's
   * or a job's `skills`, unlike a workgroup's `users`). Setting it needs the owner's write and the
   * listed collection's read, and the listed items do not change with it. Its link table's
   * inserts and deletes bump the owner's row (a trigger of the migration that makes it), so a list
   * of owners with it may be remembered under the owner table's version (read.ts `rememberable`).
   */
  oneWay?: boolean;
  /** The listed items' collection itself (set by the registry; `where=<list>.id` checks its read). */
  targetCollection?: import('./collection.js').Collection;
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
  compute(db: Executor, caller: import('./collection.js').Caller, rows: Record<string, unknown>[]): Promise<unknown[]>;
  /** Made from its row's columns alone, the same at every read: an answer with it may be remembered (answers.ts). */
  stable?: boolean;
}

export type Field = ScalarField | ObjectField | AssocField | AssocListField | WriteOnlyField | ComputedField;

/**
 * The field builders: each value kind's from its own file (kinds/), then the shapes built of
 * them (objects, associations, write-only values).
 */
export const f = {
  ...textFields,
  ...integerFields,
  ...numberFields,
  ...decimalFields,
  ...booleanFields,
  ...flagFields,
  ...datetimeFields,
  ...timeFields,
  ...jsonFields,
  /** With `partial`, members may be left out (an address); the object is still written as a whole. */
  object: (
    members: Record<string, ScalarField>,
    opts: Partial<BaseField> & { partial?: boolean } = {},
  ): ObjectField => {
    const { partial, ...rest } = opts;
    const member = (m: ScalarField) => (partial ? Type.Optional(m.schema) : m.schema);
    return {
      kind: 'object',
      members,
      schema: Type.Object(Object.fromEntries(Object.entries(members).map(([k, m]) => [k, member(m)])), {
        additionalProperties: false,
      }),
      ...rest,
    };
  },
  /** An association `{id}` stored in `column`, pointing at `target` (see AssocField). */
  assoc: (
    column: string,
    target: string,
    opts: Partial<
      Pick<
        AssocField,
        'nullable' | 'referenceFilter' | 'onDelete' | 'required' | 'readOnly' | 'extended' | 'description'
      >
    > & { members?: readonly string[] } = {},
  ): AssocField => {
    const { members = [], ...rest } = opts;
    return {
      kind: 'assoc',
      column,
      target,
      memberNames: members,
      table: '',
      accountColumn: 'account_id',
      members: {},
      onDelete: rest.nullable ? 'set null' : 'restrict',
      ...rest,
      schema: rest.nullable ? Type.Union([AssocRef, Type.Null()]) : AssocRef,
    };
  },
  writeOnly: (schema: TSchema, opts: Partial<BaseField> = {}): WriteOnlyField => ({
    kind: 'writeOnly',
    schema,
    ...opts,
  }),
};

/** The column a `near` list's rows carry their rounded distance in (a name no table has). */
export const DISTANCE = 'fsm_distance';

/** Shared field kinds: one declaration of each pattern, used by every collection. */
export const PHONE = '^\\+[0-9]{7,15}$';
export const COLOUR = '^#[0-9A-Fa-f]{6}$';
const EMAIL = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$';

export const kinds = {
  /** `+` and 7–15 digits. */
  phone: (column: string, opts: ScalarOpts = {}) => f.string(column, { pattern: PHONE, ...opts }),
  /** `#RRGGBB`. */
  colour: (column: string, opts: ScalarOpts = {}) => f.string(column, { pattern: COLOUR, ...opts }),
  email: (column: string, opts: ScalarOpts = {}) =>
    f.string(column, { maxLength: 254, pattern: EMAIL, format: 'email', ...opts }),
  location: locationFields.location,
  point: locationFields.point,
  /**
   * `distance` of an item with a location: with `near` (machinery/near.ts), km from the point,
   * rounded to 3 decimals; null otherwise. Read-only, shown with `near` or `fields=*`.
   */
  distance: (): ComputedField => ({
    kind: 'computed',
    readOnly: true,
    extended: true,
    schema: Type.Union([Type.Number(), Type.Null()]),
    description: 'With `near`: the great-circle distance in km from that point, to 3 decimals; null without.',
    columns: [],
    compute: async (_db, _caller, rows) =>
      rows.map((r) => (r[DISTANCE] === null || r[DISTANCE] === undefined ? null : Number(r[DISTANCE]))),
  }),
  /**
   * A postal address as one object mapped onto `address_*` columns. Members may be left out; a
   * written address replaces the stored one as a whole (left-out members become empty).
   */
  address: (): ObjectField => {
    const address = f.object(
      {
        line1: f.string('address_line1', { nullable: true, maxLength: 200 }),
        line2: f.string('address_line2', { nullable: true, maxLength: 200 }),
        city: f.string('address_city', { nullable: true, maxLength: 100 }),
        region: f.string('address_region', { nullable: true, maxLength: 100 }),
        postcode: f.string('address_postcode', { nullable: true, maxLength: 20 }),
        country: f.string('address_country', { nullable: true, maxLength: 100 }),
        location: kinds.location('address'),
      },
      { partial: true },
    );
    // `address: null` written means no address (every member empty); it is read as `{}`.
    return { ...address, schema: Type.Union([address.schema, Type.Null()]) };
  },
};

/**
 * Every date-time the API accepts (an instant, a user's status timestamp, a date-time parameter)
 * lies from the first millisecond of 1970 to the last of 9999, in UTC: instants are epoch ms in
 * `bigint` columns (which hold far more), but the API writes four-digit years, and a span between
 * two such times is what durations (int4 seconds) are bounded by. Checked with the schema's
 * `date-time` format (src/collections/machinery/validate.ts).
 */
export const FIRST_INSTANT = Date.UTC(1970, 0, 1);
export const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export const INSTANT_RANGE = '1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z';
/** Epoch ms of a date-time in the accepted range, or undefined (not a date-time, or outside it). */
export function instantMs(v: unknown): number | undefined {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(ms) && ms >= FIRST_INSTANT && ms <= LAST_INSTANT ? ms : undefined;
}
/** The largest id any item can have. */
export const MAX_ID = INT32_MAX;
export const isItemId = (v: unknown): v is number =>
  Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_ID;

export const AssocRef = Type.Object(
  { id: Type.Integer({ minimum: 1, maximum: MAX_ID }) },
  { additionalProperties: false },
);

/** A business's postal address: the members of a client's address, without its location. */
const POSTAL_ADDRESS = Type.Object(
  {
    line1: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    line2: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    city: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    region: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    postcode: Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Null()])),
    country: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  },
  { additionalProperties: false },
);

/**
 * What the account's quotes and invoices print of the business (issue 50; migration 095): members
 * of `account` like `currency`, written by Administrators with `POST /users/account`
 * (src/collections/users/account.ts). Null until set.
 */
export const ACCOUNT_DOCUMENT_FIELDS: Record<string, ScalarField> = {
  address: f.json('address', POSTAL_ADDRESS, {
    nullable: true,
    description: 'The business address its documents print (members as a client address, without location).',
  }),
  phone: kinds.phone('phone', { nullable: true, description: 'The business phone its documents print.' }),
  email: kinds.email('email', { nullable: true, description: 'The business e-mail its documents print.' }),
  taxNumber: f.string('tax_number', {
    nullable: true,
    minLength: 1,
    maxLength: 50,
    description: 'The tax (VAT, GST, ABN, EIN…) number its documents print.',
  }),
  logo: f.json('logo', AssocRef, {
    nullable: true,
    description: 'An image (PNG or JPEG) `files` item of the account printed at the top of its documents.',
  }),
  paymentTerms: f.string('payment_terms', {
    nullable: true,
    minLength: 1,
    maxLength: 1000,
    description: 'Payment terms its invoices print ("Payment within 14 days").',
  }),
  bankDetails: f.string('bank_details', {
    nullable: true,
    minLength: 1,
    maxLength: 1000,
    description: 'Bank details its invoices print (account holder, IBAN, BIC…); lines separated by newlines.',
  }),
  paperSize: f.enum('paper_size', ['A4', 'Letter'], {
    nullable: true,
    description: "The documents' paper; null: Letter when `address.country` is the US or Canada, A4 elsewhere.",
  }),
};

/** The account members every item's `account` shows with `[*]`. */
export const ACCOUNT_MEMBERS = [
  'companyName',
  'licenses',
  'countryCode',
  'companyAccountCode',
  'currency',
  'timeZone',
  ...Object.keys(ACCOUNT_DOCUMENT_FIELDS),
] as const;

/**
 * The tables behind every account that are not collections of the API, as association targets:
 * their members are declared here once, like a collection's fields.
 */
export const REFERENCE_TABLES: Record<string, Target> = {
  accounts: {
    table: 'accounts',
    accountColumn: 'id',
    fields: {
      companyName: f.string('company_name'),
      licenses: f.integer('licenses'),
      countryCode: f.integer('country_code'),
      companyAccountCode: f.string('company_account_code', { nullable: true }),
      currency: f.string('currency', { description: 'ISO 4217 code of the amounts (PRODUCT §9).' }),
      timeZone: f.string('time_zone', { description: "IANA time zone of the account's dates." }),
      ...ACCOUNT_DOCUMENT_FIELDS,
    },
  },
  roles: { table: 'roles', accountColumn: 'account_id', fields: { name: f.string('name') } },
};

/** The members every collection item has. */
export function standardFields(opts: { accountRequired?: boolean; deleted?: boolean } = {}): Record<string, Field> {
  const fields: Record<string, Field> = {
    account: f.assoc('account_id', 'accounts', {
      required: opts.accountRequired,
      onDelete: 'cascade',
      members: ACCOUNT_MEMBERS,
    }),
    created: f.time('created'),
    modified: f.time('modified'),
  };
  if (opts.deleted !== false) fields.deleted = f.boolean('deleted', { default: false });
  return fields;
}

/**
 * `customFields` (PRODUCT §12): one JSON column, `custom_fields`, of key → value, typed by the
 * account's definitions when written and shown without the keys of deleted definitions
 * (src/collections/machinery/custom.ts). A collection has it by declaring `customFields: true`.
 */
export function customFieldsField(): ScalarField {
  const value = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
  return {
    ...f.json('custom_fields', Type.Record(Type.String(), value), {
      description:
        "The account's own fields (customFieldDefinitions): key → value, `{}` when none. A write sets the keys it sends (null removes one) and keeps the others.",
    }),
    // Written as sent (null removes a key); each value is checked against its definition.
    schema: Type.Record(Type.String(), Type.Unknown()),
    customFields: true,
  };
}
