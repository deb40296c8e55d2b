import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/api.js';
import { FieldServiceError } from './errors.js';
import { Session, type SessionOptions } from './session.js';
import { retryAfterSeconds, transport, type RetryOptions } from './transport.js';
import type {
  Changes,
  Collection,
  Creatable,
  Deletable,
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

type Id = { readonly id: number };
type Target = number | Id;
type Answer = { data?: unknown; error?: unknown; response: Response };
// One untyped view of the typed client, for the generic calls below (their types are derived from `paths`).
type Untyped = { request(method: string, path: string, init?: object): Promise<Answer> };

/** The client: sign in, then read and write every collection with types generated from the server's OpenAPI document. */
export class FieldService {
  /** The typed `openapi-fetch` client for any operation, with `X-Version`, the token and retries already handled. */
  readonly api: Client<paths>;
  private readonly etags = new WeakMap<object, string>();

  private constructor(
    readonly session: Session,
    opts: FieldServiceOptions,
  ) {
    this.api = createClient<paths>({
      baseUrl: String(opts.apiUrl ?? session.as.issuer).replace(/\/$/, ''),
      fetch: transport({ session, retry: opts.retry, fetch: opts.fetch, sleep: opts.sleep }),
    });
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

  /** One item; its `ETag` is remembered, so `updateItem`/`deleteItem` of it send `If-Match`. */
  async get<N extends Collection, F extends Selector<N> = '*'>(
    collection: N,
    id: number,
    opts: { fields?: readonly F[] } = {},
  ): Promise<Selected<N, F>> {
    const query = opts.fields ? { fields: opts.fields.join(',') } : {};
    const { body, response } = await this.call<Record<N, Selected<N, F>[]>>('GET', `/${collection}/{id}`, {
      params: { path: { id }, query },
    });
    return this.remember(body[collection][0], response);
  }

  /** The `ETag` the item was read or written with, if known. */
  etag(item: object): string | undefined {
    return this.etags.get(item);
  }

  /** Creates the items in one atomic write; answers them in order. */
  async create<N extends Creatable>(collection: N, items: readonly NewItem<N>[]): Promise<Item<N>[]> {
    return (await this.write<N>('POST', `/${collection}`, collection, { body: { [collection]: items } })).items;
  }

  /** Changes the items (each names its `id`) in one atomic write. */
  async update<N extends Updatable>(collection: N, items: readonly ItemChange<N>[]): Promise<Item<N>[]> {
    return (await this.write<N>('PATCH', `/${collection}`, collection, { body: { [collection]: items } })).items;
  }

  /** Deletes the items in one atomic write. */
  async delete<N extends Deletable>(collection: N, targets: readonly Target[]): Promise<Item<N>[]> {
    return (
      await this.write<N>('DELETE', `/${collection}`, collection, {
        body: { [collection]: targets.map((t) => ({ id: idOf(t) })) },
      })
    ).items;
  }

  /**
   * Changes one item. Given an item read by `get` (or answered by a previous `updateItem`), the
   * change applies only if the item is unchanged since (`If-Match`); otherwise a
   * `FieldServiceError` with status 412 (code 1080) is thrown and nothing changes.
   */
  async updateItem<N extends Updatable>(collection: N, target: Target, changes: Changes<N>): Promise<Item<N>> {
    const { items, response } = await this.write<N>('PATCH', `/${collection}/{id}`, collection, {
      params: { path: { id: idOf(target) } },
      body: { [collection]: [changes] },
      headers: this.ifMatch(target),
    });
    return this.remember(items[0], response);
  }

  /** Deletes one item, with `If-Match` as `updateItem`. */
  async deleteItem<N extends Deletable>(collection: N, target: Target): Promise<Item<N>> {
    return (
      await this.write<N>('DELETE', `/${collection}/{id}`, collection, {
        params: { path: { id: idOf(target) } },
        headers: this.ifMatch(target),
      })
    ).items[0];
  }

  private async write<N extends Collection>(method: string, path: string, collection: N, init: object) {
    const { body, response } = await this.call<{ metadata: WriteMetadata } & Record<N, Item<N>[]>>(method, path, init);
    return { items: body[collection], response };
  }

  private async call<T>(method: string, path: string, init: object): Promise<{ body: T; response: Response }> {
    const { data, error, response } = await (this.api as unknown as Untyped).request(method.toLowerCase(), path, init);
    if (!response.ok) throw new FieldServiceError(response.status, error, retryAfterSeconds(response));
    return { body: data as T, response };
  }

  private ifMatch(target: Target): Record<string, string> {
    const etag = typeof target === 'object' ? this.etags.get(target) : undefined;
    return etag ? { 'If-Match': etag } : {};
  }

  private remember<T>(item: T, response: Response): T {
    const etag = response.headers.get('etag');
    if (etag && item && typeof item === 'object') this.etags.set(item, etag);
    return item;
  }
}

const idOf = (t: Target) => (typeof t === 'number' ? t : t.id);

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
