import type { Expression, ExpressionBuilder, Selectable, SqlBool } from 'kysely';
import type { AuthContext, RoleKind } from '../../auth/context.js';
import type { ApiErrorBody } from '../../errors.js';
import type { Executor } from '../../db/tx.js';
import { containsIndexName } from '../../db/text.js';
import type { DB } from '../../db/types.js';
import type { Field, ScalarField, ValueType } from './fields.js';
import { INT32_MAX, customFieldsField } from './fields.js';
import { KINDS } from './kinds/index.js';
import type { CmpOp } from './where.js';
import type { ChangeRecording, Services } from './contracts.js';

export type { RoleKind };
export type Op = 'create' | 'update' | 'delete';
export type Access = 'all' | 'own' | 'none';

/** The caller as the collection machinery sees it: who (the token) and where they reach us. */
export interface Caller extends AuthContext {
  /** The origin clients reach the server at (config.publicUrl), for links the API returns. */
  publicUrl: string;
  /** WEBHOOKS_ALLOW_PRIVATE_URLS: webhooks may target private addresses over plain http. */
  privateUrls?: boolean;
  /**
   * The server's clock (tests inject their own), for a time read once a lock is held: `now` is when
   * the request arrived, which a request that waited for another one must not go back to.
   */
  clock?: () => number;
}

/** A stored row, as the database returns it (every table has an integer `id`). */
export type Row = { id: number } & Record<string, unknown>;
/** The columns a write sets, by name. */
export type Columns = Record<string, unknown>;
/** A table of the schema (src/db/types.ts). */
export type TableName = keyof DB & string;
/**
 * A collection's stored row, typed by its table: what its rules read. The machinery, which serves
 * every table alike, sees `Row`; `AnyTable` is how it passes rules their table's types unchecked.
 */
export type RowOf<T extends TableName> = Selectable<DB[T]>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTable = any;
export type Item = Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type EB = ExpressionBuilder<any, any>;

export interface Policy {
  read: Record<RoleKind, Access>;
  write: Record<RoleKind, Access>;
  /** The rows a user with 'own' access may see or change. */
  own?(caller: Caller, eb: EB, table: string): Expression<SqlBool>;
  /**
   * Whether the 'own' rows are, for this caller, every row of the account (an Administrator who
   * may read every collection's events): the list is then read as 'all' (kept counts, remembered answers).
   */
  everyRow?(caller: Caller): boolean;
  /**
   * The other tables `own` reads (a Contractor's jobs are those with their visits: ['visits']),
   * each a counted one. Named, a list under 'own' is remembered as one of every row is (its
   * answer, its count: src/db/memo.ts), under their versions as well as its table's.
   */
  ownReads?: readonly string[];
  /** Whether an 'own' writer may create items (the item is then checked by `ownsNew`). */
  ownsNew?(caller: Caller, item: Item): boolean;
  /**
   * The association to `jobs` an item is written on (notes, charges, files, visits, timesheets,
   * form submissions: `'job'`). A caller who reads only some jobs (a Contractor: PRODUCT §2) writes
   * such an item only on one of those: any other job is a failure naming the member, as if it
   * were missing. Checked by the write pipeline for a whole batch in one query (authorize.ts,
   * checkJobsSeen), on the job the item's row ends up with, however the collection derives it.
   */
  onSeenJob?: string;
  /**
   * Who may call each action, by name: every name of `actions` has a rule (defineCollection refuses
   * a collection with an action and no rule). The gate asks it after the collection's read or write
   * access: a role not in `roles` is 403 roleForbids with `why`.
   */
  actions?: Record<string, RoleRule>;
  /** Who may delete, where that is narrower than `write` (Contractors never delete jobs). */
  delete?: RoleRule;
}

/** A rule of the access layer: the roles that may, beyond the collection's access; absent, every role it lets through. */
export interface RoleRule {
  roles?: readonly RoleKind[];
  /** A named predicate on the caller and the URL's item id (the user themself, or an Administrator). */
  item?: (caller: Pick<Caller, 'role' | 'userId'>, id: number) => boolean;
  /** The 403's message for the others. */
  why?: string;
}

/** What every rule hook receives about one item of a write: one argument, always this shape. */
export interface ItemContext<T extends TableName = AnyTable> {
  caller: Caller;
  op: Op;
  item: Item;
  /** The item's position in the request. */
  index: number;
  /** The stored row on update and delete, once loaded (inside the transaction); undefined before. */
  existing?: RowOf<T>;
  /** The columns this write sets (empty on delete); rules may add server-side columns. */
  row: Partial<RowOf<T>>;
  /** What the caller attached beside the item, never through it (an upload's staged bytes). */
  attached?: unknown;
  /**
   * The process's services, given to `prepare` only (outside the transaction: a plan reads the
   * day it plans and runs the solver there, holding no write lock meanwhile).
   */
  services?: Omit<Services, 'writer'>;
}

/** An item's context inside the write transaction. */
export interface TxItemContext<T extends TableName = AnyTable> extends ItemContext<T> {
  db: Executor;
  /** Rules that change other rows say so here first, so the change is seen (events). */
  changes: ChangeRecording;
  /**
   * What `fn` finds, looked up once per write under `key` (the account's default role or status,
   * which every item of a batch would otherwise read again).
   */
  once<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

/** What a collection adds to the shared write pipeline; each hook is optional. */
export interface Rules<T extends TableName = AnyTable> {
  /** Per-item checks after the schema checks, before the transaction (no stored row yet). */
  validate?(i: ItemContext<T>): ApiErrorBody[];
  /** Role rules that depend on the item or its stored row (throw ApiError('roleForbids')). */
  authorize?(i: ItemContext<T>): void;
  /** Preparation outside the transaction that the checks need (a webhook URL's DNS answer); may set columns on `row`. */
  prepare?(i: ItemContext<T>): Promise<void>;
  /**
   * Columns that are slow to make and only a write needs (a password's hash): the work for this
   * item, or nothing. It runs once every check of the batch passed, outside the transaction (no
   * write lock held meanwhile); the checks then run again, cheaply, in the transaction that writes.
   */
  slowColumns?(i: ItemContext<T>): (() => Promise<Partial<RowOf<T>>>) | undefined;
  /** Checks inside the transaction, before anything is written. */
  check?(i: TxItemContext<T>): Promise<ApiErrorBody[]>;
  /** Sets server-side columns inside the transaction (generated references, defaults from other rows). */
  fill?(i: TxItemContext<T>): Promise<void>;
  /**
   * The rules change rows of the account other than the batch's own (statuses: a new default clears
   * the old one): on PostgreSQL the collection's writes in one account then run one at a time
   * (src/collections/machinery/write/lock-rows.ts).
   */
  exclusive?: boolean;
  /**
   * An item's `check` depends on rows that the batch's earlier items write (an invoice's balance
   * that payments lower, the charges an invoice bills): each item is checked just before it is
   * written, once the items before it are, as if the items came one after another in one
   * transaction (src/collections/machinery/write/apply.ts). `exclusive` collections are so too, and
   * their stored rows are read again before each item's check (an earlier item may have changed them).
   */
  sequential?: boolean;
  /**
   * Where writers run side by side (PostgreSQL): locks the rules need taken before the batch's own
   * rows are locked, so every path that takes both takes them in one order (timesheets: the
   * users' time before their entries, as a check-in does). Runs first in the transaction.
   */
  lockFirst?(b: { db: Executor; caller: Caller; op: Op; items: Item[]; ids: number[] }): Promise<void>;
  /** Runs after the item's row was written, in the same transaction. */
  after?(i: TxItemContext<T> & { id: number }): Promise<void>;
  /**
   * What must hold of the account once every item of the batch was written, in the same
   * transaction (it keeps an Administrator): the errors of each item, by index; any rolls back all.
   */
  verify?(b: { db: Executor; items: ItemContext<T>[] }): Promise<ApiErrorBody[][]>;
  /**
   * Values shown once, in the answer of a create only (a webhook's secret): from the columns the
   * create wrote, never read back afterwards.
   */
  reveal?(row: Partial<RowOf<T>>): Item;
  /**
   * Runs once the transaction has committed (never after a rollback): side effects outside the
   * database, such as removing stored bytes nothing references any more.
   */
  committed?(c: {
    services: Omit<Services, 'writer'>;
    caller: Caller;
    op: Op;
    ids: number[];
    existing: (RowOf<T> | undefined)[];
  }): Promise<void>;
}

export interface CollectionDef<T extends TableName = AnyTable> {
  name: string;
  /** One item in words, when not derived from the name (`statuses` → "status"; see nounsOf). */
  singular?: string;
  table: T;
  description: string;
  fields: Record<string, Field>;
  policy: Policy;
  rules?: Rules<T>;
  /**
   * Rows per account are counted by triggers into `row_counts` (slots summed), so an unfiltered
   * list answers `recordsCount` without counting. The collection's migration makes the triggers
   * (src/db/migrations/scheme.ts); src/db/derived.test.ts fails when none did.
   */
  counted?: boolean;
  /**
   * A valid new item, for the documentation (OpenAPI examples, docs/collections.md) and for the
   * tests that exercise every collection alike. `ref(target)` is an existing item of the target
   * (a collection's name, `accounts` or `roles`) in the caller's account.
   */
  example: (ref: (target: string) => { id: number }) => Item;
  /** The text field lists are searched by, when not the first required text field (a webhook's description, not its URL). */
  textField?: string;
  /** POST actions: `/:collection/:action` and `/:collection/:item/:action`. */
  actions?: Record<string, ActionHandler>;
  /** What the OpenAPI document says of each action beyond the shared envelopes and errors. */
  actionDocs?: Record<string, ActionDoc>;
  /** Actions that need the collection's `.read` permission, not `.write` (a user's calendarLink). */
  readActions?: readonly string[];
  /**
   * Actions answered at GET, not POST (a job's slots): reads that change nothing, with the
   * `.read` permission; their query is theirs to parse (no list modifiers).
   */
  getActions?: readonly string[];
  /** When set, items are created only by this action: a plain `POST /:collection` gets 405. */
  createVia?: string;
  /** Items are written only by the server (events, deliveries): GET only, other methods 405. */
  readOnly?: boolean;
  /** Items are created and never changed (locations): GET and POST only, PATCH and DELETE 405. */
  appendOnly?: boolean;
  /**
   * The name its permissions carry, when not its own (deliveries are read with `webhooks.read`).
   * A read-only collection has no `.write` permission of its own.
   */
  permission?: string;
  /**
   * false: its changes are not recorded, so they are no events (deliveries: the queue that sends
   * events; recording it would make events of events).
   */
  recorded?: boolean;
  /**
   * Items carry `customFields` (PRODUCT §12): the account's own fields, in the table's
   * `custom_fields` column (migration 070's `addCustomFields`).
   */
  customFields?: boolean;
  /**
   * `q` searches these fields' text (and every text custom field): object fields (an address) by
   * their members. The table has `search_text` and its index (migration 070's `addSearch`).
   */
  search?: string[];
  /** How an account's export and import carry the collection (PRODUCT §19; machinery/transfer.ts). */
  transfer?: TransferRules;
  /** OpenAPI paths the collection serves beside the dispatcher (the files' signed downloads). */
  extraPaths?: Record<string, unknown>;
}

/** What a collection's export and import need beyond its fields (PRODUCT §19). */
export interface TransferRules {
  /** false: not exported (events, deliveries: what the server made of the items, not the business's data). */
  exported?: false;
  /** Stored columns exported by the operator's CLI only, as extra members (users' `passwordHash`). */
  hidden?: Record<string, string>;
  /**
   * Sets the stored columns an imported row needs that no member carries (a webhook's new secret);
   * what it answers is listed in the import's output under the collection's name.
   */
  onImport?(row: Columns): Item | undefined;
}

/**
 * The collection's items in words, plural and singular, for sentences ("List tax rates", "Read one
 * tax rate"): camelCase names split, the singular declared or derived by the usual English endings.
 */
export function nounsOf(c: Pick<CollectionDef, 'name' | 'singular'>): { plural: string; singular: string } {
  const words = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  const n = c.name;
  const derived = /ies$/.test(n)
    ? `${n.slice(0, -3)}y`
    : /(ss|us|x|ch|sh)es$/.test(n)
      ? n.slice(0, -2)
      : n.endsWith('s')
        ? n.slice(0, -1)
        : n;
  return { plural: words(n), singular: words(c.singular ?? derived) };
}

/** The permission a request on the collection needs (`jobs.read`, `webhooks.write`). */
export const permissionFor = (c: CollectionDef, need: 'read' | 'write'): string => `${c.permission ?? c.name}.${need}`;

/** An action call, free of the HTTP framework: what the request carried, and the services to use. */
export interface ActionRequest {
  caller: Caller;
  item?: number;
  /** The body's media type as sent (`Content-Type`), when it has one. */
  contentType?: string;
  /** The body's length in bytes as the client declared it (`Content-Length`), when it did. */
  declaredLength?: number;
  /** The action's parameters (`GET /jobs/:id/slots?from=…`). */
  query: Readonly<Record<string, unknown>>;
  /** Parsed JSON, or for any other media type the raw bytes as a stream. */
  body: unknown;
  /** The parts of a multipart/form-data body, streamed; undefined for other bodies. */
  parts?(limits: MultipartLimits): AsyncIterable<MultipartPart>;
  services: Services;
  /** The request's `Idempotency-Key`, when it has one; see RetryHandle. */
  retry?: RetryHandle;
}

/**
 * What an action whose body only it reads (an upload) does with an `Idempotency-Key`: `claim`
 * once it knows the body's digest (a kept answer to replay comes back; 409 and 422 are thrown),
 * and `keep` its answer from the write's seal hook, in the write's transaction.
 */
export interface RetryHandle {
  claim(bodyDigest: string): Promise<ActionAnswer | undefined>;
  keep(tx: Executor, answer: ActionAnswer): Promise<void>;
}

export interface MultipartLimits {
  fileSize: number;
  files: number;
  fields: number;
  parts: number;
  fieldSize: number;
}

export type MultipartPart =
  | { type: 'field'; fieldname: string; value: unknown }
  | { type: 'file'; fieldname: string; filename: string; mimetype: string; file: import('node:stream').Readable };

/**
 * The answer of an action: a status and an envelope (200 unless said otherwise). One rule for
 * every answer, of an action or of the write pipeline (rules.reveal): `body` is what may be kept
 * for an `Idempotency-Key` and replayed, so it never holds a secret; an answer that shows one once
 * (a webhook's new secret) carries it in `revealed`, the body as this first answer sends it,
 * which is never kept.
 */
export interface ActionAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  revealed?: unknown;
}

/** OpenAPI fragments for an action; `on: 'collection'` is POST /:collection/:action (no item). */
export interface ActionDoc {
  on: 'collection' | 'item';
  /** The collection whose items the action answers, when not its own (a ping answers its delivery). */
  answers?: string;
  summary: string;
  description?: string;
  parameters?: Record<string, unknown>[];
  requestBody?: Record<string, unknown>;
  /** The 200 answer's schema, when it is none of a collection's Write envelope (a GET action's own). */
  response?: Record<string, unknown>;
}

export type ActionHandler = (a: ActionRequest) => Promise<ActionAnswer>;

export interface FilterColumn {
  column: string;
  type: ValueType;
  nullable: boolean;
  /** A bigint column (an integer field declared past int4, such as a file's size). */
  wide?: boolean;
  /** What is compared instead of the column (a custom field's member of `custom_fields`). */
  expr?: Expression<unknown>;
  /** The operators it takes, when not every one its type takes. */
  ops?: readonly CmpOp[];
  /** `= value` answered by an index, where the database has one for it. */
  equals?: (value: unknown) => Expression<SqlBool> | undefined;
  /** An exact decimal stored as an integer of 10^-scale: a filter's value is scaled alike. */
  scale?: number;
  /** An amount in the account's currency: a filter's value has at most the currency's decimals. */
  money?: boolean;
  /** The trigram index of `~` on it (a member declared `contains`): its name (src/db/text.ts). */
  contains?: string;
}

export interface Collection extends CollectionDef {
  rules: Rules;
  /** Filterable and sortable names (`id`, scalars, `status.message`, `role.id`) -> column. */
  columns: Map<string, FilterColumn>;
  defaultFields: string[];
  allFields: string[];
  /** The first required text field (no choice of values; one without a pattern first): what lists are searched by. */
  textField: string;
}

export function defineCollection<T extends TableName>(def: CollectionDef<T>): Collection {
  const unruled = Object.keys(def.actions ?? {}).filter((a) => !def.policy.actions?.[a]);
  if (unruled.length) throw new Error(`${def.name}: no access rule (policy.actions) for ${unruled.join(', ')}`);
  if (def.customFields) def = { ...def, fields: { ...def.fields, customFields: customFieldsField() } };
  const columns = new Map<string, FilterColumn>([['id', { column: 'id', type: 'integer', nullable: false }]]);
  // A column declared past int4 is a bigint (a file's size): its literals may be as wide.
  const wide = (s: ScalarField) => ((s.valueSchema as { maximum?: number }).maximum ?? 0) > INT32_MAX;
  const addScalar = (name: string, s: ScalarField) => {
    if (KINDS[s.type].compare)
      columns.set(name, {
        column: s.column,
        type: s.type,
        nullable: !!s.nullable,
        wide: wide(s),
        scale: s.scale,
        money: s.money,
        ...(s.contains && { contains: containsIndexName(def.table, s.column) }),
      });
  };
  for (const [name, field] of Object.entries(def.fields)) {
    if (field.kind === 'scalar') addScalar(name, field);
    else if (field.kind === 'object') for (const [m, s] of Object.entries(field.members)) addScalar(`${name}.${m}`, s);
    else if (field.kind === 'assoc')
      columns.set(`${name}.id`, { column: field.column, type: 'integer', nullable: !!field.nullable });
  }
  const readable = Object.entries(def.fields).filter(([, fl]) => fl.kind !== 'writeOnly');
  const texts = Object.entries(def.fields).filter(
    ([, fl]) =>
      fl.kind === 'scalar' && KINDS[fl.type] === KINDS.string && fl.required && fl.valueSchema.anyOf === undefined,
  );
  const text = texts.find(([, fl]) => fl.kind === 'scalar' && fl.valueSchema.pattern === undefined) ?? texts[0];
  if (!text && !def.textField) throw new Error(`${def.name}: no required text field`);
  return {
    ...def,
    rules: def.rules ?? {},
    columns,
    defaultFields: readable.filter(([, fl]) => !fl.extended).map(([n]) => n),
    allFields: readable.map(([n]) => n),
    textField: def.textField ?? text![0],
  };
}
