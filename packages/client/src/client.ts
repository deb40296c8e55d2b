import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/api.js';
import { FieldServiceError } from './errors.js';
import { follow, pollEvents, streamEvents, type FollowOptions } from './events.js';
import { Session, type SessionOptions } from './session.js';
import { retryAfterSeconds, transport, type RetryOptions } from './transport.js';
import type {
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
  Updatable,
  Value,
  Where,
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
type Target = number | Id;
type Answer = { data?: unknown; error?: unknown; response: Response };
// One untyped view of the typed client, for the generic calls below (their types are derived from `paths`).
type Untyped = { request(method: string, path: string, init?: object): Promise<Answer> };

/** The client: sign in, then read and write every collection with types generated from the server's OpenAPI document. */
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

  /** Creates the items in one atomic write; answers them in order. */
  async create<N extends Creatable>(
    collection: N,
    items: readonly NewItem<N>[],
    opts: WriteOptions = {},
  ): Promise<Item<N>[]> {
    return (await this.write<N, Item<N>>('POST', `/${collection}`, collection, { body: { [collection]: items } }, opts))
      .items;
  }

  /** Changes the items (each names its `id`) in one atomic write. */
  async update<N extends Updatable>(
    collection: N,
    items: readonly ItemChange<N>[],
    opts: WriteOptions = {},
  ): Promise<Item<N>[]> {
    return (
      await this.write<N, Item<N>>('PATCH', `/${collection}`, collection, { body: { [collection]: items } }, opts)
    ).items;
  }

  /** Deletes the items in one atomic write; answers their ids. */
  async delete<N extends Deletable>(
    collection: N,
    targets: readonly Target[],
    opts: WriteOptions = {},
  ): Promise<Deleted[]> {
    const body = { [collection]: targets.map((t) => ({ id: typeof t === 'number' ? t : t.id })) };
    return (await this.write<N, Deleted>('DELETE', `/${collection}`, collection, { body }, opts)).items;
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
    const { items, response } = await this.write<N, Item<N>>(
      'PATCH',
      `/${collection}/{id}`,
      collection,
      { params: { path: { id } }, body: { [collection]: [changes] } },
      opts,
    );
    return { item: items[0], etag: etagOf(response) };
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
    const headers = {
      ...(opts.idempotencyKey !== undefined ? { 'Idempotency-Key': opts.idempotencyKey } : {}),
      ...(opts.ifMatch !== undefined ? { 'If-Match': opts.ifMatch } : {}),
    };
    const { body, response } = await this.call<{ metadata: WriteMetadata } & Record<N, T[]>>(method, path, {
      ...init,
      headers,
    });
    return { items: body[collection], response };
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
