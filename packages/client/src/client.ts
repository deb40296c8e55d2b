import createClient, { type Client } from 'openapi-fetch';
import { ACTIONS, VIEWS } from './generated/actions.js';
import type { paths } from './generated/api.js';
import { FieldServiceError } from './errors.js';
import { follow, pollEvents, streamEvents, type FollowOptions } from './events.js';
import { Session, type SessionOptions } from './session.js';
import { retryAfterSeconds, transport, type RetryOptions } from './transport.js';
import type {
  ActionCollection,
  ActionInput,
  ActionName,
  ActionResult,
  ViewAnswer,
  ViewCollection,
  ViewName,
  ViewQuery,
  ChangeEvent,
  Changes,
  Collection,
  Creatable,
  Deletable,
  Deleted,
  Item,
  ItemChange,
  ListMetadata,
  ListOptions,
  NewItem,
  Selected,
  Selector,
  Summary,
  SummaryOptions,
  Updatable,
  Value,
  Where,
  WithMeta,
  WriteMetadata,
} from './types.js';

export interface FieldServiceOptions extends SessionOptions {
  /** Where the API is, when not at the issuer (a proxy, another host). */
  apiUrl?: string | URL;
  retry?: RetryOptions;
  /** The HTTP transport of API calls (default: global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  sleep?: (ms: number) => Promise<void>;
}

export interface WriteOptions {
  /**
   * The write's `Idempotency-Key`. By default each call makes its own, the same on each of its
   * retries; give your own (kept with the work to do) so that a retry after a crash or a restart
   * is recognised too: the server answers the first result again and does nothing twice.
   */
  idempotencyKey?: string;
}

export interface ItemWriteOptions extends WriteOptions {
  /**
   * The `ETag` the item was read with (`get()` answers it beside the item; keep it with your copy):
   * sent as `If-Match`, so the write applies only if nobody changed the item since; otherwise a
   * `FieldServiceError` with status 412 (code 1080) is thrown and nothing changes.
   */
  ifMatch?: string;
}

/** An item and the `ETag` of the version it is. */
export interface Versioned<T> {
  item: T;
  etag: string;
}

type Id = { readonly id: number };
/** An item: its id, or the item itself (anything with its `id`). */
export type Target = number | Id;

/**
 * One item action as a method: `(item, options?)`, or `(item, input?, options?)` when the action
 * takes a body (a check-in's `{ location }`). It answers the item (with `meta`) or throws a
 * `FieldServiceError` (a draft-only action on an issued invoice: 422, code 1280).
 */
export type ActionMethod<N extends ActionCollection, A extends ActionName<N>> = [ActionInput<N, A>] extends [never]
  ? (item: Target, opts?: WriteOptions) => Promise<WithMeta<ActionResult<N, A>>>
  : (item: Target, input?: ActionInput<N, A>, opts?: WriteOptions) => Promise<WithMeta<ActionResult<N, A>>>;
/** A collection's actions: `fsm.invoices.issue(id)`, `fsm.quotes.accept(id)`, `fsm.visits.checkIn(id, { location })`. */
export type CollectionActions<N extends ActionCollection> = { readonly [A in ActionName<N>]: ActionMethod<N, A> };
/** One item view as a method: `fsm.jobs.slots(job, { from, to })` answers `{ slots, metadata }`. */
export type ViewMethod<N extends ViewCollection, V extends ViewName<N>> = (
  item: Target,
  query: ViewQuery<N, V>,
  opts?: { signal?: AbortSignal },
) => Promise<ViewAnswer<N, V>>;
/** A collection's views: `fsm.jobs.slots(id, { from, to })`. */
export type CollectionViews<N extends ViewCollection> = { readonly [V in ViewName<N>]: ViewMethod<N, V> };
type Methods<N extends ActionCollection | ViewCollection> = (N extends ActionCollection
  ? CollectionActions<N>
  : unknown) &
  (N extends ViewCollection ? CollectionViews<N> : unknown);
/** The namespaces, one per collection with actions or views (generated from the server's OpenAPI document). */
export type ActionNamespaces = { readonly [N in ActionCollection | ViewCollection]: Methods<N> };
type Answer = { data?: unknown; error?: unknown; response: Response };
// One untyped view of the typed client, for the generic calls below (their types are derived from `paths`).
type Untyped = { request(method: string, path: string, init?: object): Promise<Answer> };

// The action namespaces (`fsm.invoices`, `fsm.quotes`, …) are made by the constructor from the
// generated ACTIONS table; this declaration gives the class their types.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface FieldService extends ActionNamespaces {}

/** The client: sign in, then read and write every collection with types generated from the server's OpenAPI document. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class FieldService {
  /** The typed `openapi-fetch` client for any operation, with `X-Version`, the token and retries already handled. */
  readonly api: Client<paths>;
  /** The account's events, in commit order. */
  readonly events = {
    /**
     * Every event after `after`, in id order, then each new one as it commits, until `signal`
     * aborts (the loop then ends without an error). `onCursor(id)` is called once the loop body
     * for that event has finished: save it and pass it back as `after` to resume with nothing
     * missed (an event whose body threw or broke out comes again).
     */
    follow: (opts: FollowOptions = {}): AsyncGenerator<ChangeEvent> => {
      const poll = (after: number) =>
        pollEvents((where, recordsPerPage, signal) => this.eventsAfter(where, recordsPerPage, signal), {
          ...opts,
          after,
        });
      const stream = opts.stream ?? (opts.pollIntervalMs === undefined && opts.recordsPerPage === undefined);
      if (!stream) return follow(poll(opts.after ?? 0), opts);
      return follow(
        streamEvents((lastEventId, signal) => this.openEventStream(opts, lastEventId, signal), poll, opts),
        opts,
      );
    },
  };

  /** The transport every call goes through (token, X-Version, retries). */
  private readonly send: (request: Request) => Promise<Response>;
  private readonly baseUrl: string;

  /** `GET /events` as Server-Sent Events after `lastEventId`; undefined when the server answers the JSON list instead. */
  private async openEventStream(opts: FollowOptions, lastEventId: number, signal: AbortSignal) {
    const url = new URL(`${this.baseUrl}/events`);
    if (opts.where) url.searchParams.set('where', whereString(opts.where));
    const res = await this.send(
      new Request(url, { headers: { accept: 'text/event-stream', 'last-event-id': String(lastEventId) }, signal }),
    );
    if (res.ok && /^text\/event-stream/i.test(res.headers.get('content-type') ?? '')) return res;
    const body = await res.json().catch(() => undefined);
    if (res.ok) return undefined;
    throw new FieldServiceError(res.status, body, retryAfterSeconds(res));
  }

  private constructor(
    readonly session: Session,
    opts: FieldServiceOptions,
  ) {
    this.baseUrl = String(opts.apiUrl ?? session.as.issuer).replace(/\/$/, '');
    this.send = transport({ session, retry: opts.retry, fetch: opts.fetch, sleep: opts.sleep });
    this.api = createClient<paths>({ baseUrl: this.baseUrl, fetch: this.send });
    const namespaces: Record<string, Record<string, unknown>> = {};
    for (const [collection, actions] of Object.entries(ACTIONS))
      for (const [action, spec] of Object.entries(actions) as [string, { answers: string; input?: string }][])
        (namespaces[collection] ??= {})[action] = (item: Target, ...rest: unknown[]) => {
          const [input, opts] = spec.input ? rest : [undefined, rest[0]];
          return this.act(collection, action, spec, item, input, (opts ?? {}) as WriteOptions);
        };
    for (const [collection, views] of Object.entries(VIEWS))
      for (const view of Object.keys(views))
        (namespaces[collection] ??= {})[view] = async (
          item: Target,
          query: object,
          opts?: { signal?: AbortSignal },
        ) => {
          const { body } = await this.call<{ result?: unknown }>('GET', `/${collection}/{id}/${view}`, {
            params: { path: { id: idOf(item) }, query },
            ...(opts?.signal ? { signal: opts.signal } : {}),
          });
          const { result: _, ...answer } = body;
          return answer;
        };
    for (const [collection, methods] of Object.entries(namespaces))
      Object.defineProperty(this, collection, { value: Object.freeze(methods), enumerable: true });
  }

  /** `POST /{collection}/{id}/{action}`: the one item answered, with `meta`. */
  private async act(
    collection: string,
    action: string,
    spec: { answers: string; input?: string },
    item: Target,
    input: unknown,
    opts: WriteOptions,
  ) {
    const init = {
      params: { path: { id: idOf(item) } },
      ...(spec.input && input !== undefined ? { body: { [spec.input]: [input] } } : {}),
    };
    const { items, response, key } = await this.write<Collection, unknown>(
      'POST',
      `/${collection}/{id}/${action}`,
      spec.answers as Collection,
      init,
      opts,
    );
    return withMeta(items[0] as object, response, key);
  }

  /** Reads the server's OAuth metadata from the issuer: nothing else to configure. */
  static async discover(opts: FieldServiceOptions): Promise<FieldService> {
    return new FieldService(await Session.discover(opts), opts);
  }

  authorizationUrl(opts?: Parameters<Session['authorizationUrl']>[0]) {
    return this.session.authorizationUrl(opts);
  }

  signIn(callback: URL | string, expected: { state: string; codeVerifier: string }) {
    return this.session.signIn(callback, expected);
  }

  revoke(): Promise<void> {
    return this.session.revoke();
  }

  /** Every item that matches, page after page (`metadata.pagesCount` says when to stop). */
  async *list<N extends Collection, F extends Selector<N> = '*'>(
    collection: N,
    opts: ListOptions<N, F> = {},
  ): AsyncGenerator<Selected<N, F>> {
    const query = {
      ...(opts.where ? { where: whereString(opts.where) } : {}),
      ...(opts.fields ? { fields: opts.fields.join(',') } : {}),
      ...(opts.sort ? { sort: opts.sort.join(',') } : {}),
      recordsPerPage: opts.recordsPerPage ?? 100,
    };
    for (let page = 1; ; page++) {
      const { body } = await this.call<{ metadata: ListMetadata } & Record<N, Selected<N, F>[]>>(
        'GET',
        `/${collection}`,
        { params: { query: { ...query, page } } },
      );
      yield* body[collection];
      if (page >= body.metadata.pagesCount || body[collection].length === 0) return;
    }
  }

  /**
   * `GET /{collection}/summary` (PRODUCT §19): groups and aggregates computed by the server in one
   * statement, under the same scope as the list; one page of groups (`metadata.recordsCount` groups in all).
   */
  async summary<N extends Collection>(collection: N, opts: SummaryOptions<N> = {}): Promise<Summary> {
    const query = {
      ...(opts.groupBy?.length ? { groupBy: opts.groupBy.join(',') } : {}),
      ...(opts.aggregate?.length ? { aggregate: opts.aggregate.join(',') } : {}),
      ...(opts.where ? { where: whereString(opts.where) } : {}),
      ...(opts.page ? { page: opts.page } : {}),
      ...(opts.recordsPerPage ? { recordsPerPage: opts.recordsPerPage } : {}),
    };
    const { body } = await this.call<Summary>('GET', `/${collection}/summary`, { params: { query } });
    return { summary: body.summary, metadata: body.metadata };
  }

  /** One item and its `ETag`: pass it as `ifMatch` to `updateItem`/`deleteItem` to change this version only. */
  async get<N extends Collection, F extends Selector<N> = '*'>(
    collection: N,
    id: number,
    opts: { fields?: readonly F[] } = {},
  ): Promise<Versioned<Selected<N, F>>> {
    const query = opts.fields ? { fields: opts.fields.join(',') } : {};
    const { body, response } = await this.call<Record<N, Selected<N, F>[]>>('GET', `/${collection}/{id}`, {
      params: { path: { id }, query },
    });
    return { item: body[collection][0], etag: etagOf(response) };
  }

  /** Creates the items in one atomic write; answers them in order (and the answer's `meta`). */
  async create<N extends Creatable>(
    collection: N,
    items: readonly NewItem<N>[],
    opts: WriteOptions = {},
  ): Promise<WithMeta<Item<N>[]>> {
    const {
      items: created,
      response,
      key,
    } = await this.write<N, Item<N>>('POST', `/${collection}`, collection, { body: { [collection]: items } }, opts);
    return withMeta(created, response, key);
  }

  /** Creates one item: the item itself (with `meta`), no array to unpack. */
  async createOne<N extends Creatable>(
    collection: N,
    item: NewItem<N>,
    opts: WriteOptions = {},
  ): Promise<WithMeta<Item<N>>> {
    const created = await this.create(collection, [item], opts);
    return withMeta(created[0], created.meta);
  }

  /** Changes the items (each names its `id`) in one atomic write. */
  async update<N extends Updatable>(
    collection: N,
    items: readonly ItemChange<N>[],
    opts: WriteOptions = {},
  ): Promise<WithMeta<Item<N>[]>> {
    const {
      items: changed,
      response,
      key,
    } = await this.write<N, Item<N>>('PATCH', `/${collection}`, collection, { body: { [collection]: items } }, opts);
    return withMeta(changed, response, key);
  }

  /**
   * Changes one item by its URL: the item (with `meta`; `meta.etag` is its new `ETag`). With
   * `ifMatch`, only if it is unchanged since it was read (else a 412, code 1080).
   */
  async updateOne<N extends Updatable>(
    collection: N,
    item: Target,
    changes: Changes<N>,
    opts: ItemWriteOptions = {},
  ): Promise<WithMeta<Item<N>>> {
    const { items, response, key } = await this.write<N, Item<N>>(
      'PATCH',
      `/${collection}/{id}`,
      collection,
      { params: { path: { id: idOf(item) } }, body: { [collection]: [changes] } },
      opts,
    );
    return withMeta(items[0], response, key);
  }

  /** Deletes the items in one atomic write; answers their ids. */
  async delete<N extends Deletable>(
    collection: N,
    targets: readonly Target[],
    opts: WriteOptions = {},
  ): Promise<WithMeta<Deleted[]>> {
    const body = { [collection]: targets.map(idOf).map((id) => ({ id })) };
    const { items, response, key } = await this.write<N, Deleted>(
      'DELETE',
      `/${collection}`,
      collection,
      { body },
      opts,
    );
    return withMeta(items, response, key);
  }

  /**
   * Changes one item; with `ifMatch` (the `ETag` from `get()`), only if it is unchanged since.
   * Answers the item and its new `ETag`, for the next change.
   */
  async updateItem<N extends Updatable>(
    collection: N,
    id: number,
    changes: Changes<N>,
    opts: ItemWriteOptions = {},
  ): Promise<Versioned<Item<N>>> {
    const item = await this.updateOne(collection, id, changes, opts);
    if (item.meta.etag === undefined) throw new Error(`PATCH /${collection}/${id} answered without an ETag`);
    return { item, etag: item.meta.etag };
  }

  /** Deletes one item; with `ifMatch`, only if it is unchanged since it was read. */
  async deleteItem<N extends Deletable>(collection: N, id: number, opts: ItemWriteOptions = {}): Promise<Deleted> {
    return (
      await this.write<N, Deleted>('DELETE', `/${collection}/{id}`, collection, { params: { path: { id } } }, opts)
    ).items[0];
  }

  private async write<N extends Collection, T>(
    method: string,
    path: string,
    collection: N,
    init: object,
    opts: ItemWriteOptions,
  ) {
    // The key is made here (not only by the transport) so that `meta` can say which one was sent.
    const key = opts.idempotencyKey ?? crypto.randomUUID();
    const headers = {
      'Idempotency-Key': key,
      ...(opts.ifMatch !== undefined ? { 'If-Match': opts.ifMatch } : {}),
    };
    const { body, response } = await this.call<{ metadata: WriteMetadata } & Record<N, T[]>>(method, path, {
      ...init,
      headers,
    });
    return { items: body[collection] as T[], response, key };
  }

  /** One page of events matching `where`, in id order (the feed moves `where`'s cursor, so always page 1). */
  private async eventsAfter(where: Where<'events'>, recordsPerPage: number, signal?: AbortSignal) {
    const query = { where: whereString(where), sort: 'id', recordsPerPage, page: 1 };
    const { body } = await this.call<{ events: ChangeEvent[] }>('GET', '/events', {
      params: { query },
      ...(signal ? { signal } : {}),
    });
    return body.events;
  }

  private async call<T>(method: string, path: string, init: object): Promise<{ body: T; response: Response }> {
    const { data, error, response } = await (this.api as unknown as Untyped).request(method.toLowerCase(), path, init);
    if (!response.ok) throw new FieldServiceError(response.status, error, retryAfterSeconds(response));
    return { body: data as T, response };
  }
}

function idOf(t: Target): number {
  return typeof t === 'number' ? t : t.id;
}

/** The value with its answer's `meta` as a non-enumerable, read-only property. */
function withMeta<T extends object>(
  value: T,
  response: Response | WithMeta<unknown>['meta'],
  key?: string,
): WithMeta<T> {
  const meta =
    response instanceof Response
      ? {
          status: response.status,
          replayed: /^true$/i.test(response.headers.get('idempotency-replayed') ?? ''),
          etag: response.headers.get('etag') ?? undefined,
          idempotencyKey: key,
        }
      : response;
  return Object.defineProperty(value, 'meta', { value: Object.freeze(meta), enumerable: false }) as WithMeta<T>;
}

/** The answer's `ETag`; the server sends one with every item read or changed by its URL. */
function etagOf(response: Response): string {
  const etag = response.headers.get('etag');
  // Without it the caller could not make a conditional change: better said now than lost later.
  if (!etag) throw new Error(`${response.url} answered without an ETag (a proxy dropped it?)`);
  return etag;
}

/** The `where` modifier's text: values quoted and escaped, never spliced as given. */
export function whereString<N extends Collection>(w: Where<N>): string {
  if ('and' in w) return w.and.map((x) => `(${whereString(x)})`).join(' and ');
  if ('or' in w) return w.or.map((x) => `(${whereString(x)})`).join(' or ');
  const [field, op, value] = w;
  return `${field} ${op} ${literal(value)}`;
}

function literal(v: Value): string {
  if (v instanceof Date) return literal(v.toISOString());
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return String(v);
}
