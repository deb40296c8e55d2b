import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { ApiErrorBody } from '../../http/errors.js';
import type { Executor } from '../../db/tx.js';
import { INT32_MAX, type Field, type ScalarField, type ValueType } from './fields.js';

export type RoleKind = 'administrator' | 'employee' | 'contractor';
export type Op = 'create' | 'update' | 'delete';
export type Access = 'all' | 'own' | 'none';

/** Who is calling: everything a request knows after its bearer token was checked. */
export interface AuthContext {
  accountId: number;
  userId: number;
  role: RoleKind;
  permissions: ReadonlySet<string>;
  clientId: string;
  now: number;
  /** The origin clients reach the server at (config.publicUrl), for links the API returns. */
  publicUrl?: string;
}

export type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
export type Item = Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type EB = ExpressionBuilder<any, any>;

export interface Policy {
  read: Record<RoleKind, Access>;
  write: Record<RoleKind, Access>;
  /** The rows a user with 'own' access may see or change. */
  own?(ctx: AuthContext, eb: EB, table: string): Expression<SqlBool>;
  /** Whether an 'own' writer may create items (the item is then checked by `ownsNew`). */
  ownsNew?(ctx: AuthContext, item: Item): boolean;
}

export interface WriteContext {
  ctx: AuthContext;
  db: Executor;
}

/** What is truly a collection's own: each hook is optional. */
export interface Rules {
  /** Per-item checks after the schema checks; `existing` is the stored row on update. */
  validate?(item: Item, op: Op, ctx: AuthContext, existing?: Row): ApiErrorBody[];
  /** Role rules that depend on the item (throw ApiError('roleForbids')). */
  authorize?(ctx: AuthContext, op: Op, item: Item, existing?: Row): void;
  /** Slow preparation outside the transaction (hashing a password); may set extra columns. */
  prepare?(ctx: AuthContext, op: Op, item: Item, row: Row): Promise<void>;
  /** Checks inside the transaction, before writing. */
  check?(w: WriteContext, op: Op, item: Item, existing?: Row): Promise<ApiErrorBody[]>;
  /** Sets server-side columns inside the transaction (generated references, defaults from other rows). */
  fill?(w: WriteContext, op: Op, item: Item, row: Row, existing?: Row): Promise<void>;
  /** Runs after the row was written, in the same transaction. */
  after?(w: WriteContext, op: Op, id: number, item: Item, row: Row, existing?: Row): Promise<void>;
  /**
   * Runs once the transaction has committed (never after a rollback): side effects outside the
   * database, such as removing stored bytes nothing references any more. `existing` per id.
   */
  committed?(database: import('../../db/index.js').Database, ctx: AuthContext, op: Op, ids: number[], existing: (Row | undefined)[]): Promise<void>;
}

export interface CollectionDef {
  name: string;
  table: string;
  description: string;
  fields: Record<string, Field>;
  policy: Policy;
  rules?: Rules;
  /** POST actions: `/:collection/:action` and `/:collection/:item/:action`. */
  actions?: Record<string, ActionHandler>;
  /** What the OpenAPI document says of each action beyond the shared envelopes and errors. */
  actionDocs?: Record<string, ActionDoc>;
  /** When set, items are created only by this action: a plain `POST /:collection` gets 405. */
  createVia?: string;
}

export interface ActionRequest {
  ctx: AuthContext;
  item?: number;
  request: import('fastify').FastifyRequest;
  reply: import('fastify').FastifyReply;
}

/** OpenAPI fragments for an action; `on: 'collection'` is POST /:collection/:action (no item). */
export interface ActionDoc {
  on: 'collection' | 'item';
  summary: string;
  description?: string;
  parameters?: Record<string, unknown>[];
  requestBody?: Record<string, unknown>;
}

/** Returns the envelope to send (status 200), or undefined when it answered the reply itself. */
export type ActionHandler = (a: ActionRequest) => Promise<unknown>;

export interface FilterColumn {
  column: string;
  type: ValueType;
  nullable: boolean;
  /** A bigint column (an integer field declared past int4, such as a file's size). */
  wide?: boolean;
}

export interface Collection extends CollectionDef {
  rules: Rules;
  /** Filterable and sortable names (`id`, scalars, `status.message`, `role.id`) -> column. */
  columns: Map<string, FilterColumn>;
  defaultFields: string[];
  allFields: string[];
}

export function defineCollection(def: CollectionDef): Collection {
  const columns = new Map<string, FilterColumn>([['id', { column: 'id', type: 'integer', nullable: false }]]);
  const wide = (s: ScalarField) => s.type === 'integer' && ((s.valueSchema as { maximum?: number }).maximum ?? 0) > INT32_MAX;
  const addScalar = (name: string, s: ScalarField) => columns.set(name, { column: s.column, type: s.type, nullable: !!s.nullable, wide: wide(s) });
  for (const [name, field] of Object.entries(def.fields)) {
    if (field.kind === 'scalar') addScalar(name, field);
    else if (field.kind === 'object') for (const [m, s] of Object.entries(field.members)) addScalar(`${name}.${m}`, s);
    else if (field.kind === 'assoc') columns.set(`${name}.id`, { column: field.column, type: 'integer', nullable: !!field.nullable });
  }
  const readable = Object.entries(def.fields).filter(([, fl]) => fl.kind !== 'writeOnly');
  return {
    ...def,
    rules: def.rules ?? {},
    columns,
    defaultFields: readable.filter(([, fl]) => !fl.extended).map(([n]) => n),
    allFields: readable.map(([n]) => n),
  };
}
