import type { components, paths } from './generated/api.js';

/** Every type below is derived from the generated `paths` and `components`: nothing is written twice. */
type Schemas = components['schemas'];
type Schema<K extends string> = K extends keyof Schemas ? Schemas[K] : never;

/** The collections: each `/{name}` path that lists items (`users`, `jobs`, `visits`, …). */
export type Collection = {
  [P in keyof paths]: P extends `/${infer N}`
    ? N extends `${string}/${string}`
      ? never
      : `${Capitalize<N>}List` extends keyof Schemas
        ? N
        : never
    : never;
}[keyof paths];

type Has<N extends Collection, M extends 'post' | 'patch' | 'delete'> = paths[`/${N}`] extends { [K in M]: object }
  ? N
  : never;
/** Collections that take `POST /{name}`, `PATCH /{name}`, `DELETE /{name}` (events and deliveries are read-only). */
export type Creatable = { [N in Collection]: Has<N, 'post'> }[Collection];
export type Updatable = { [N in Collection]: Has<N, 'patch'> }[Collection];
export type Deletable = { [N in Collection]: Has<N, 'delete'> }[Collection];

/** An item as the API answers it (only `id` is always present: the rest depends on `fields`). */
export type Item<N extends Collection> = Schema<Capitalize<N>>;
/** An item to create: required members required, enums checked, read-only members refused. */
export type NewItem<N extends Creatable> = Schema<`${Capitalize<N>}Create`>;
/** A change to one item of a batch update: its `id` and the members to change. */
export type ItemChange<N extends Updatable> = Schema<`${Capitalize<N>}Update`>;
/** A change to one item addressed by the URL: the members to change. */
export type Changes<N extends Updatable> = Omit<Schema<`${Capitalize<N>}ItemUpdate`>, 'id'>;

/** A field name of the collection's items. */
export type Field<N extends Collection> = Extract<keyof Item<N>, string>;
/** Association fields (`status`, `client`, …), filtered and sorted on as `status.id`. */
type AssocField<N extends Collection> = {
  [K in Field<N>]: NonNullable<Item<N>[K]> extends readonly unknown[]
    ? never
    : NonNullable<Item<N>[K]> extends { id: number }
      ? K
      : never;
}[Field<N>];
/** What `where` and `sort` name: a field, or an association's `id`. */
export type FilterField<N extends Collection> = Field<N> | `${AssocField<N>}.id`;

export type Operator = '~' | '!~' | '=' | '!=' | '<' | '<=' | '>' | '>=';
export type Value = string | number | boolean | null | Date;
/** A filter: `[field, operator, value]`, or `{ and: [...] }` / `{ or: [...] }` of filters. */
export type Where<N extends Collection> =
  | readonly [FilterField<N>, Operator, Value]
  | { readonly and: readonly Where<N>[] }
  | { readonly or: readonly Where<N>[] };

/** `fields`: field names, `*` (every field) and `[*]` (associations in full). */
export type Selector<N extends Collection> = Field<N> | '*' | '[*]';
/** The items a `fields` selection yields: `id` and the fields named (any field with `*` or `[*]`). */
export type Selected<N extends Collection, F extends Selector<N>> = [Extract<F, '*' | '[*]'>] extends [never]
  ? Pick<Item<N>, Extract<F | 'id', keyof Item<N>>>
  : Item<N>;

export interface ListOptions<N extends Collection, F extends Selector<N>> {
  where?: Where<N>;
  fields?: readonly F[];
  /** Field names, `-name` for descending; the server's default is `id`. */
  sort?: readonly (FilterField<N> | `-${FilterField<N>}`)[];
  /** Items per request (1–1000; default 100). */
  recordsPerPage?: number;
}

/** Every event type a webhook can receive. */
export type EventType = `${Collection}.${'created' | 'updated' | 'deleted'}` | 'webhook.ping';
/** The body of a webhook delivery (docs/events.md): the event item as `/events` shows it. */
export interface WebhookEvent {
  /** `webhook-id`: the same on every retry of this delivery; dedupe on it. */
  id: string;
  type: EventType;
  timestamp: string;
  data: Schemas['Events'];
}

export type ApiError = Schemas['Error'];
export type WriteMetadata = Schemas['WriteMetadata'];
export type ListMetadata = Schemas['ListMetadata'];
