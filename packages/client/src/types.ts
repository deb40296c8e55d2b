import type { ACTIONS, VIEWS } from './generated/actions.js';
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

/** Every field an item can have, each optional: which ones an answer has depends on `fields`. */
export type ItemFields<N extends Collection> = Schema<Capitalize<N>>;
/**
 * An item as answered without `fields`, and by `create` and `update`: `id` and every default
 * field, present (null when empty); the extended ones (`fields=*`) optional. An event is a union
 * by `type` (`ChangeEvent`).
 */
export type Item<N extends Collection> = Schema<`${Capitalize<N>}Default`>;
/** An item to create: required members required, enums checked, read-only members refused. */
export type NewItem<N extends Creatable> = Schema<`${Capitalize<N>}Create`>;
/** A change to one item of a batch update: its `id` and the members to change. */
export type ItemChange<N extends Updatable> = Schema<`${Capitalize<N>}Update`>;
/** A change to one item addressed by the URL: the members to change. */
export type Changes<N extends Updatable> = Omit<Schema<`${Capitalize<N>}ItemUpdate`>, 'id'>;

/** A field name of the collection's items. */
export type Field<N extends Collection> = Extract<keyof ItemFields<N>, string>;
/** Association fields (`status`, `client`, …), filtered and sorted on as `status.id`. */
type AssocField<N extends Collection> = {
  [K in Field<N>]: NonNullable<ItemFields<N>[K]> extends readonly unknown[]
    ? never
    : NonNullable<ItemFields<N>[K]> extends { id: number }
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
/**
 * The items a `fields` selection yields: `id` and the fields named, each present (null when
 * empty); with `*` or `[*]` (or no `fields`), an `Item` (its default fields present).
 */
export type Selected<N extends Collection, F extends Selector<N>> = [Extract<F, '*' | '[*]'>] extends [never]
  ? Required<Pick<ItemFields<N>, Extract<F | 'id', keyof ItemFields<N>>>>
  : Item<N>;
/** What a deletion answers of each item: its id. */
export type Deleted = { id: number };

export interface ListOptions<N extends Collection, F extends Selector<N>> {
  where?: Where<N>;
  fields?: readonly F[];
  /** Field names, `-name` for descending; the server's default is `id`. */
  sort?: readonly (FilterField<N> | `-${FilterField<N>}`)[];
  /** Items per request (1–1000; default 100). */
  recordsPerPage?: number;
}

/** `summary()`'s options (PRODUCT §19): up to 3 group keys, the aggregates, a filter and a page of groups. */
export interface SummaryOptions<N extends Collection> {
  /** Default fields, associations by role (`client`), or `day(f)`, `week(f)`, `month(f)`, `year(f)`. */
  groupBy?: readonly string[];
  /** `count`, `sum(f)`, `avg(f)`, `min(f)`, `max(f)`; the server's default is `count`. */
  aggregate?: readonly string[];
  where?: Where<N>;
  page?: number;
  /** Groups per page (1–1000; the server's default is 50). */
  recordsPerPage?: number;
}

/** A summary's page: the groups in ascending order of their keys, and the paging over groups. */
export type Summary = Omit<Schemas['Summary'], 'result'>;

type AnyEvent = Schema<'EventsDefault'>;
/** The collections whose changes are events (all but `events` and `deliveries`). */
export type Recorded = AnyEvent['collection'];
/**
 * An event as `/events` answers it without `fields` (and `events.follow` yields it): a union by
 * `type`, so `if (e.type === 'jobs.updated')` makes `e.data` a job with its default fields.
 */
export type ChangeEvent<C extends Recorded = Recorded> = Extract<AnyEvent, { collection: C }>;
/** Every event type a webhook can receive. */
export type EventType = AnyEvent['type'] | 'webhook.ping';

type Delivered<E> = E extends AnyEvent
  ? {
      /** `webhook-id`: the same on every retry of this delivery; dedupe on it. */
      id: string;
      type: E['type'];
      timestamp: string;
      data: E;
    }
  : never;
/**
 * The body of a webhook delivery (docs/events.md), a union by `type`: a change's `data` is its
 * event as `/events` shows it; a `webhook.ping` names its webhook.
 */
export type WebhookEvent =
  Delivered<AnyEvent> | { id: string; type: 'webhook.ping'; timestamp: string; data: { webhook: { id: number } } };

export type ApiError = Schemas['Error'];
export type WriteMetadata = Schemas['WriteMetadata'];
export type ListMetadata = Schemas['ListMetadata'];

type Actions = typeof ACTIONS;
/** The collections with item actions (`POST /{collection}/{id}/{action}`): `invoices`, `quotes`, `visits`, … */
export type ActionCollection = keyof Actions & Collection;
/** The actions of a collection's items: `issue`, `void` and `pdf` of `invoices`, … */
export type ActionName<N extends ActionCollection> = Extract<keyof Actions[N], string>;
type ActionOp<N extends ActionCollection, A extends ActionName<N>> = paths[`/${N}/{id}/${A}` & keyof paths] extends {
  post: infer O;
}
  ? O
  : never;
/** What an action takes beside the id (a check-in's `{ location }`), or `never` when it takes nothing. */
export type ActionInput<N extends ActionCollection, A extends ActionName<N>> =
  ActionOp<N, A> extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B extends { [K in Actions[N][A] extends { input: infer I extends string } ? I : never]?: readonly (infer I)[] }
      ? I
      : never
    : never;
/** The item an action answers: the item acted on, changed (`issue`: the invoice), or another (`pdf`: the file). */
export type ActionResult<N extends ActionCollection, A extends ActionName<N>> = Item<
  Actions[N][A] extends { answers: infer C extends Collection } ? C : never
>;

type Views = typeof VIEWS;
/** The collections with item views (`GET /{collection}/{id}/{view}`): `jobs` (`slots`). */
export type ViewCollection = keyof Views & Collection;
/** The views of a collection's items: `slots` of `jobs`. */
export type ViewName<N extends ViewCollection> = Extract<keyof Views[N], string>;
type ViewOp<N extends ViewCollection, V extends ViewName<N>> = paths[`/${N}/{id}/${V}` & keyof paths] extends {
  get: infer O;
}
  ? O
  : never;
/** What a view asks for in its query (`{ from, to, duration?, window?, page?, recordsPerPage? }` for slots). */
export type ViewQuery<N extends ViewCollection, V extends ViewName<N>> =
  ViewOp<N, V> extends { parameters: { query: infer Q } }
    ? Q
    : ViewOp<N, V> extends { parameters: { query?: infer Q } }
      ? Q
      : never;
/** A view's answer without its `result`: its list (`slots`) and `metadata`. */
export type ViewAnswer<N extends ViewCollection, V extends ViewName<N>> =
  ViewOp<N, V> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? Omit<B, 'result'> : never;

/**
 * What the answer's headers said of a write, on its result as the non-enumerable property `meta`
 * (not in `JSON.stringify`, a spread or `deepEqual`: the result stays the plain item or items).
 */
export interface ResponseMeta {
  /** The HTTP status. */
  status: number;
  /** `Idempotency-Replayed: true`: this is the first answer to the same key again; nothing was done twice. */
  replayed: boolean;
  /** The answer's `ETag`: an item written by its URL (`updateOne`) has one; a batch (`create`, `update`) has none. */
  etag: string | undefined;
  /** The `Idempotency-Key` the write was sent with (yours, or the one made for the call). */
  idempotencyKey: string | undefined;
}
/** A result and the `meta` of the answer it came in. */
export type WithMeta<T> = T & { readonly meta: ResponseMeta };
