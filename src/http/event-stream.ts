import type { ServerResponse } from 'node:http';
import net from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../auth/bearer.js';
import type { AuthContext } from '../auth/context.js';
import { subscribeCommits, type CommitSubscription } from '../db/commits.js';
import { ApiError } from '../errors.js';
import type { Caller, Collection, Row } from '../collections/machinery/collection.js';
import { gate } from '../collections/machinery/access.js';
import { parseListQuery } from '../collections/machinery/modifiers.js';
import { present } from '../collections/machinery/present.js';
import { checkWhere, whereTest } from '../collections/machinery/filter.js';
import type { WhereNode } from '../collections/machinery/where.js';
import { readableCollections, seesEventsByCollection } from '../collections/events/index.js';
import { eventsAfter, newestEventId, newestEventIds } from '../collections/events/repository.js';
import { API_VERSION } from './envelope.js';

/**
 * `GET /events` with `Accept: text/event-stream` (PRODUCT §13, docs/events.md): the events list
 * as a Server-Sent Events stream, with the list's visibility and `where`.
 *
 * One hub per process. Per account with open streams it keeps a cursor, the last event id it has
 * dispatched; when woken it reads the events after it once, serialises each once, and hands every
 * stream the frames it may see: a stream of an Administrator or Employee whose `where` is absent
 * or compares `collection` alone is filtered by collection in memory, the others share one id
 * query per distinct (visibility, `where`). Woken by the commits that recorded events
 * (src/db/commits.ts: PostgreSQL's NOTIFY from every process; on SQLite this process's own) and a
 * poll of the newest event id, which sees the commits of other processes on SQLite and keeps
 * streams fed while a lost LISTEN connection is opened again. An account is dispatched at most every DISPATCH_MS, so commits close
 * together reach each stream in one write. A stream joining behind the cursor reads its own
 * backlog first.
 */
export const MAX_STREAMS_PER_TOKEN = 10;
export const HEARTBEAT_MS = 10_000;
const AUTH_CHECK_MS = 2_000;
const TICK_MS = 1_000;
const POLL_MS = 200;
/**
 * An account's new events are handed out at most this often: commits closer together reach the
 * streams in one write each (a busy account's 500 streams take 4 writes a second each, not one per
 * commit), for at most this much more latency. Each write is a system call per stream: at 100 ms,
 * 500 streams took a fifth of a core of the bench's server (docs/performance.md).
 */
const DISPATCH_MS = 250;
const NOTIFIED_POLL_MS = 2_000;
const BATCH = 500;
/** A stream whose unsent bytes are past this when more is to be sent is cut off (a slow reader is never buffered without limit). */
export const STREAM_BUFFER_LIMIT = 512 * 1024;

interface Stream {
  caller: Caller;
  authorization: string;
  tokenHash: string;
  where?: WhereNode;
  /** Streams with the same key see the same events. */
  group: string;
  /** Whether the stream sees an event of a collection, in memory; null: filtered by an id query. */
  visible: ((event: { collection: string }) => boolean) | null;
  last: number;
  raw: ServerResponse;
  /** The response is HTTP/1.1 chunked on a real socket: frames go to it already framed (write). */
  chunked: boolean;
  lastWrite: number;
  lastAuth: number;
  open: boolean;
}

interface AccountState {
  streams: Set<Stream>;
  cursor: number;
  busy: boolean;
  again: boolean;
  /** When the last dispatch started; a wake before DISPATCH_MS since waits for this timer. */
  lastPump: number;
  timer?: NodeJS.Timeout;
}

const CRLF = Buffer.from('\r\n');

/** Bytes to send to one or more streams, with their HTTP/1.1 chunk framing made at most once. */
class Chunk {
  readonly body: Buffer;
  private withFraming?: Buffer;
  constructor(text: string) {
    this.body = Buffer.from(text);
  }
  get length(): number {
    return this.body.length;
  }
  framed(): Buffer {
    return (this.withFraming ??= Buffer.concat([Buffer.from(`${this.body.length.toString(16)}\r\n`), this.body, CRLF]));
  }
}

const ID_TERM_OPS = new Set(['>', '>=']);

/** Takes the `id > N` / `id >= N` terms out of the top-level conjunction: the stream's start. */
function splitStart(node: WhereNode | undefined): { start?: number; rest?: WhereNode } {
  if (!node) return {};
  if (node.type === 'cmp') {
    if (node.field === 'id' && ID_TERM_OPS.has(node.op) && typeof node.value === 'number')
      return { start: Math.max(0, node.op === '>' ? Math.floor(node.value) : Math.ceil(node.value) - 1) };
    return { rest: node };
  }
  if (node.type === 'or') return { rest: node };
  const l = splitStart(node.left);
  const r = splitStart(node.right);
  const start = l.start === undefined ? r.start : r.start === undefined ? l.start : Math.max(l.start, r.start);
  const rest = l.rest && r.rest ? { type: 'and' as const, left: l.rest, right: r.rest } : (l.rest ?? r.rest);
  return { start, rest };
}

/** `Last-Event-ID`: a non-negative integer, else a 400. */
function lastEventId(request: FastifyRequest): number | undefined {
  const v = request.headers['last-event-id'];
  if (v === undefined) return undefined;
  const s = Array.isArray(v) ? v.join(',') : v;
  if (!/^\d{1,15}$/.test(s.trim()))
    throw new ApiError(
      'badModifier',
      'Last-Event-ID must be a non-negative integer (the id of the last event received)',
    );
  return Number(s.trim());
}

/** What the in-memory test of a stream's `where` may read of an event: its collection (the brief read's). */
const COLLECTION_ONLY: ReadonlySet<string> = new Set(['collection']);

const inMemory =
  (readable: ReadonlySet<string>, test: (event: { collection: string }) => boolean) =>
  (event: { collection: string }): boolean =>
    readable.has(event.collection) && test(event);

export const wantsStream = (request: FastifyRequest): boolean =>
  /\btext\/event-stream\b/i.test(String(request.headers.accept ?? ''));

export class EventStreams {
  private readonly accounts = new Map<number, AccountState>();
  private readonly perToken = new Map<string, number>();
  private ticker?: NodeJS.Timeout;
  private poller?: NodeJS.Timeout;
  private closed = false;
  /** Commits that recorded events wake their accounts at once (src/db/commits.ts). */
  private readonly commits: CommitSubscription;

  constructor(private readonly app: FastifyInstance) {
    this.commits = subscribeCommits(
      app.database,
      app.config.databaseUrl,
      (account) => this.wake(account),
      (err) => app.log.warn({ err }, 'event streams: LISTEN failed; polling instead'),
    );
  }

  private get events(): Collection {
    return this.app.services.registry.get('events')!;
  }

  /** Opens a stream for an authenticated request; refusals are thrown as ApiErrors before any byte is sent. */
  async open(request: FastifyRequest, reply: FastifyReply, auth: AuthContext & { tokenHash: string }): Promise<void> {
    const c = this.events;
    const caller: Caller = {
      ...auth,
      publicUrl: this.app.config.publicUrl,
      privateUrls: this.app.config.webhooksAllowPrivateUrls,
    };
    gate(c, caller, 'read');
    const q = parseListQuery(c, request.query as Record<string, unknown>);
    const header = lastEventId(request);
    const { start, rest } = splitStart(q.where);
    // Last-Event-ID wins over an id term of `where` (a reconnecting client resumes where it was).
    const where = header !== undefined ? rest : start !== undefined ? rest : q.where;
    // A where term the list would refuse (an unknown field, a value of the wrong type) is a 400 now.
    if (where) checkWhere(c, where, this.app.database.db);
    const open = this.perToken.get(auth.tokenHash) ?? 0;
    if (open >= MAX_STREAMS_PER_TOKEN)
      throw new ApiError('rateLimited', `at most ${MAX_STREAMS_PER_TOKEN} open event streams per access token`, {
        'retry-after': '5',
      });
    this.perToken.set(auth.tokenHash, open + 1);
    let stream: Stream | undefined;
    try {
      const accountId = caller.accountId;
      // Not a Contractor's, and no `where` or one on `collection` alone: filtered in memory, by
      // the machinery's own reading of the tree (whereTest), from the events' collection alone.
      const byCollection = where ? whereTest(c, where, COLLECTION_ONLY) : () => true;
      const byRole = seesEventsByCollection(caller);
      const test = byRole ? byCollection : undefined;
      const readable = readableCollections(this.app.services.registry, caller);
      stream = {
        caller,
        authorization: String(request.headers.authorization),
        tokenHash: auth.tokenHash,
        where,
        group: `${byRole ? 'r' : `c${caller.userId}`}:${readable.join(',')}|${JSON.stringify(where ?? null)}`,
        visible: test ? inMemory(new Set(readable), test) : null,
        last: header ?? start ?? (await this.account(accountId)).cursor,
        raw: reply.raw,
        chunked: false,
        lastWrite: Date.now(),
        lastAuth: Date.now(),
        open: true,
      };
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        pragma: 'no-cache',
        'x-version': API_VERSION,
        'x-content-type-options': 'nosniff',
        'x-accel-buffering': 'no',
        connection: 'keep-alive',
      });
      reply.raw.write(': stream open\n\n');
      const s = stream;
      s.chunked =
        (reply.raw as unknown as { chunkedEncoding?: boolean }).chunkedEncoding === true &&
        reply.raw.socket instanceof net.Socket;
      reply.raw.on('close', () => this.drop(s));
      // The backlog first, on the stream's own visibility, until it has caught up with the cursor;
      // then it joins the account's streams in the same turn, so no event falls between.
      while (s.open) {
        const state = await this.account(accountId);
        if (s.last < state.cursor) await this.backlog(s, state.cursor);
        else if (this.accounts.get(accountId) === state) {
          state.streams.add(s);
          break;
        }
      }
      this.start();
    } catch (err) {
      if (stream) this.drop(stream);
      else this.release(auth.tokenHash);
      throw err;
    }
  }

  private release(tokenHash: string): void {
    const n = (this.perToken.get(tokenHash) ?? 1) - 1;
    if (n <= 0) this.perToken.delete(tokenHash);
    else this.perToken.set(tokenHash, n);
  }

  private drop(s: Stream): void {
    if (!s.open) return;
    s.open = false;
    this.release(s.tokenHash);
    const state = this.accounts.get(s.caller.accountId);
    state?.streams.delete(s);
    if (state && state.streams.size === 0 && !state.busy) this.accounts.delete(s.caller.accountId);
    if (!s.raw.destroyed) s.raw.end();
  }

  /**
   * Writes to a stream, unless what it was sent before is still unsent past the bound: that reader
   * is too slow and is cut off (it resumes with Last-Event-ID). A stream thus holds at most the
   * bound plus one chunk (one pump's frames), and a burst larger than the bound reaches a reader
   * that keeps up; a reader that stopped is cut off at the next event or heartbeat (10 s).
   */
  private write(s: Stream, chunk: string | Chunk): void {
    if (!s.open) return;
    if (s.raw.writableLength > STREAM_BUFFER_LIMIT) {
      this.drop(s);
      s.raw.destroy();
      return;
    }
    const c = typeof chunk === 'string' ? new Chunk(chunk) : chunk;
    // HTTP/1.1: the chunk framed once for every stream that gets it, straight to the socket (the
    // response's own write frames it again for each); else (HTTP/1.0: no chunks) through the response.
    const socket = s.raw.socket;
    if (s.chunked && socket && !socket.destroyed) socket.write(c.framed());
    else s.raw.write(c.body);
    s.lastWrite = Date.now();
  }

  private async account(accountId: number): Promise<AccountState> {
    let state = this.accounts.get(accountId);
    if (!state) {
      const last = await newestEventId(this.app.database.db, accountId);
      state = this.accounts.get(accountId);
      if (!state) {
        state = { streams: new Set(), cursor: last, busy: false, again: false, lastPump: 0 };
        this.accounts.set(accountId, state);
      }
    }
    return state;
  }

  /** The events after `from` up to `to` (at most BATCH), visible to `s` (or to all when undefined). */
  private read(
    accountId: number,
    from: number,
    to: number | undefined,
    s?: Stream,
    opts: { brief?: boolean; only?: number[] } = {},
  ): Promise<Row[]> {
    return eventsAfter(this.app.database, this.events, accountId, from, {
      ...opts,
      to,
      limit: BATCH,
      seenBy: s && { caller: s.caller, where: s.where },
    });
  }

  private async frames(caller: Caller, rows: Row[]): Promise<{ id: number; collection: string; frame: string }[]> {
    const c = this.events;
    const items = await present(this.app.database.db, c, caller, parseListQuery(c, {}).projection, rows);
    return items.map((item, i) => ({
      id: Number(rows[i].id),
      collection: String(rows[i].collection),
      frame: `id: ${rows[i].id}\nevent: ${rows[i].type}\ndata: ${JSON.stringify(item)}\n\n`,
    }));
  }

  /** A stream behind the cursor reads its own events up to it. */
  private async backlog(s: Stream, upTo: number): Promise<void> {
    const rows = await this.read(s.caller.accountId, s.last, upTo, s);
    const frames = await this.frames(s.caller, rows);
    if (frames.length) this.write(s, frames.map((f) => f.frame).join(''));
    s.last = rows.length === BATCH ? Number(rows[rows.length - 1].id) : upTo;
  }

  /** Wakes an account's streams: its new events are read once and handed out. */
  wake(accountId: number): void {
    const state = this.accounts.get(accountId);
    if (!state || this.closed) return;
    if (state.busy) {
      state.again = true;
      return;
    }
    if (state.timer) return;
    const wait = state.lastPump + DISPATCH_MS - Date.now();
    if (wait > 0) {
      state.timer = setTimeout(() => {
        state.timer = undefined;
        this.wake(accountId);
      }, wait);
      state.timer.unref();
      return;
    }
    state.lastPump = Date.now();
    state.busy = true;
    void this.pump(accountId, state)
      .catch((err) => this.app.log.error({ err }, 'event stream read failed'))
      .finally(() => {
        state.busy = false;
        if (state.streams.size === 0) this.accounts.delete(accountId);
        else if (state.again) {
          state.again = false;
          this.wake(accountId);
        }
      });
  }

  private async pump(accountId: number, state: AccountState): Promise<void> {
    for (;;) {
      state.again = false;
      if (state.streams.size === 0) return;
      const from = state.cursor;
      // Each new event's id and collection first: whole rows only for the events some stream sees
      // (a busy account's events are mostly for no stream).
      const brief = await this.read(accountId, from, undefined, undefined, { brief: true });
      if (brief.length === 0) return;
      const to = Number(brief[brief.length - 1].id);
      const groups = new Map<string, Stream[]>();
      for (const s of state.streams) {
        const g = groups.get(s.group);
        if (g) g.push(s);
        else groups.set(s.group, [s]);
      }
      // Each group's filter first: only the events some stream sees are presented and serialised.
      type Seen = (f: { id: number; collection: string }) => boolean;
      const filters: { members: Stream[]; visible: Seen }[] = [];
      for (const members of groups.values()) {
        const first = members[0];
        if (first.visible) {
          filters.push({ members, visible: first.visible });
          continue;
        }
        try {
          const ids = new Set((await this.read(accountId, from, to, first, { brief: true })).map((r) => Number(r.id)));
          filters.push({ members, visible: (f) => ids.has(f.id) });
        } catch (err) {
          // One group's failure ends its streams (they may resume), never the others'.
          this.app.log.error({ err }, 'event stream: a group could not be filtered');
          for (const s of members) this.drop(s);
        }
      }
      const seen = brief
        .map((r) => ({ id: Number(r.id), collection: String(r.collection) }))
        .filter((f) => filters.some((g) => g.visible(f)))
        .map((f) => f.id);
      const any = state.streams.values().next().value;
      const rows = seen.length && any ? await this.read(accountId, from, to, undefined, { only: seen }) : [];
      const frames = rows.length ? await this.frames(any!.caller, rows) : [];
      for (const { members, visible } of filters) {
        // Encoded once for all the group's streams.
        const chunk = new Chunk(
          frames
            .filter(visible)
            .map((f) => f.frame)
            .join(''),
        );
        for (const s of members) {
          if (s.last <= from) {
            if (chunk.length) this.write(s, chunk);
          } else if (s.last < to) {
            // Resumed ahead of the cursor (a Last-Event-ID not yet seen here): only what is newer.
            const own = frames
              .filter((f) => f.id > s.last && visible(f))
              .map((f) => f.frame)
              .join('');
            if (own) this.write(s, own);
          }
          s.last = Math.max(s.last, to);
        }
      }
      state.cursor = to;
      if (brief.length < BATCH) return;
    }
  }

  /** Timers and the listener run only while streams are open. */
  private start(): void {
    if (this.ticker || this.closed) return;
    this.ticker = setInterval(() => void this.tick(), TICK_MS);
    this.ticker.unref();
    this.commits.resume();
    this.poller = setInterval(() => void this.poll(), this.commits.everyProcess ? NOTIFIED_POLL_MS : POLL_MS);
    this.poller.unref();
  }

  private stop(): void {
    clearInterval(this.ticker);
    clearInterval(this.poller);
    this.ticker = this.poller = undefined;
    this.commits.pause();
  }

  /** The newest event id of each account with streams: a commit of any process is seen within POLL_MS. */
  private async poll(): Promise<void> {
    const ids = [...this.accounts.keys()];
    if (ids.length === 0) return;
    // A lost LISTEN connection is opened again (the poll fed the streams meanwhile).
    this.commits.resume();
    try {
      const rows = await newestEventIds(this.app.database.db, ids);
      for (const r of rows) {
        const state = this.accounts.get(Number(r.account_id));
        if (state && Number(r.max ?? 0) > state.cursor) this.wake(Number(r.account_id));
      }
    } catch (err) {
      this.app.log.warn({ err }, 'event streams: poll failed');
    }
  }

  /** Heartbeats, and the token checked again: a stream ends within seconds of its expiry or revocation. */
  private async tick(): Promise<void> {
    const now = Date.now();
    let open = 0;
    // The streams due a check, by token: one check per token (up to 10 streams share one).
    const due = new Map<string, Stream[]>();
    for (const state of this.accounts.values()) {
      for (const s of state.streams) {
        open++;
        if (now - s.lastWrite >= HEARTBEAT_MS) this.write(s, `: heartbeat ${now}\n\n`);
        if (now - s.lastAuth >= AUTH_CHECK_MS) {
          s.lastAuth = now;
          const same = due.get(s.authorization);
          if (same) same.push(s);
          else due.set(s.authorization, [s]);
        }
      }
    }
    for (const [authorization, streams] of due)
      authenticate(this.app.database, authorization, this.app.clock()).catch(() => {
        for (const s of streams) this.drop(s);
      });
    if (open === 0 && this.accounts.size === 0) this.stop();
  }

  /** Ends every stream (the server is closing). */
  async close(): Promise<void> {
    this.closed = true;
    for (const state of this.accounts.values()) {
      clearTimeout(state.timer);
      for (const s of [...state.streams]) this.drop(s);
    }
    this.accounts.clear();
    this.commits.close();
    this.stop();
  }
}
