import type { ChangeEvent, Where } from './types.js';

export interface FollowOptions {
  /** Start after this event id: the cursor saved by `onCursor` (default 0: every event the server still keeps). */
  after?: number;
  /** Only the events that match, such as `['collection', '=', 'jobs']`. */
  where?: Where<'events'>;
  /** Called with an event's id once the loop body for it has finished: save it, pass it back as `after`. */
  onCursor?: (id: number) => void | Promise<void>;
  /** Aborting it ends the loop, without an error. */
  signal?: AbortSignal;
  /** How long to wait, once every event has been read, before asking again (default 1000 ms). */
  pollIntervalMs?: number;
  /** Events per request (1–1000, default 1000). */
  recordsPerPage?: number;
  /**
   * Follow the server's live stream (`GET /events` as Server-Sent Events) rather than polling.
   * Default: the stream unless a polling option (`pollIntervalMs`, `recordsPerPage`) is given; a
   * server without the stream (it answers the JSON list) is polled instead.
   */
  stream?: boolean;
}

/**
 * Opens `/events` as a stream of the events after `lastEventId` matching `where`: the response,
 * or undefined when the server has no stream (it answered the JSON list). Errors are thrown.
 */
export type EventStreamOpener = (lastEventId: number, signal: AbortSignal) => Promise<Response | undefined>;

/**
 * How `follow` gets its events from the live stream: each `data:` of the stream, in id order; when
 * the stream ends (a deploy, a token near expiry, a cut-off) it reconnects with `Last-Event-ID`, so
 * nothing is missed. A server without the stream is polled (`poll`).
 */
export async function* streamEvents(
  open: EventStreamOpener,
  poll: (after: number) => AsyncGenerator<ChangeEvent>,
  opts: FollowOptions,
): AsyncGenerator<ChangeEvent> {
  const { signal } = opts;
  let cursor = opts.after ?? 0;
  while (!signal?.aborted) {
    const ctl = new AbortController();
    const stop = () => ctl.abort();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      let res: Response | undefined;
      try {
        res = await open(cursor, ctl.signal);
      } catch (err) {
        if (signal?.aborted) return;
        throw err;
      }
      if (!res) {
        yield* poll(cursor);
        return;
      }
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch {
          break; // the connection dropped: reconnect
        }
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        let end: number;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          const data = frame
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, ''))
            .join('\n');
          if (data === '') continue; // a comment (heartbeat)
          const event = JSON.parse(data) as ChangeEvent;
          if (signal?.aborted) return;
          yield event;
          cursor = event.id;
        }
      }
      if (!signal?.aborted) await pause(250, signal);
    } finally {
      signal?.removeEventListener('abort', stop);
      ctl.abort();
    }
  }
}

/** One page of the events matching `where`, in id order. */
export type EventPage = (
  where: Where<'events'>,
  recordsPerPage: number,
  signal?: AbortSignal,
) => Promise<ChangeEvent[]>;

/**
 * How `follow` gets its events: every event after `after` that matches `where`, in id order, until
 * `signal` aborts. This one polls: `id > cursor`, a page at a time, and waits `pollIntervalMs`
 * when a page was not full. The server's ordering promise (docs/events.md: ids become visible in
 * increasing order) makes `id > cursor` miss nothing. A stream of `/events` (Server-Sent Events)
 * can take its place: the same options in, the same events out.
 */
export async function* pollEvents(page: EventPage, opts: FollowOptions): AsyncGenerator<ChangeEvent> {
  const { signal } = opts;
  const size = opts.recordsPerPage ?? 1000;
  let cursor = opts.after ?? 0;
  while (!signal?.aborted) {
    const where: Where<'events'> = opts.where ? { and: [['id', '>', cursor], opts.where] } : ['id', '>', cursor];
    let events: ChangeEvent[];
    try {
      events = await page(where, size, signal);
    } catch (err) {
      if (signal?.aborted) return;
      throw err;
    }
    for (const event of events) {
      if (signal?.aborted) return;
      yield event;
      cursor = event.id;
    }
    if (events.length < size) await pause(opts.pollIntervalMs ?? 1000, signal);
  }
}

/**
 * The feed's events, with `onCursor` called after the consumer is done with each one (it asks for
 * the next): an event whose loop body threw or broke out is not counted, so it comes again after
 * a restart from the saved cursor (at least once, never skipped).
 */
export async function* follow(feed: AsyncIterable<ChangeEvent>, opts: FollowOptions): AsyncGenerator<ChangeEvent> {
  for await (const event of feed) {
    yield event;
    await opts.onCursor?.(event.id);
  }
}

/** Waits `ms`, or less if the signal aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
