import type { Compilable } from 'kysely';
import { inTransaction, query, slot } from './runner.js';

/**
 * Reads by id that the requests of a moment share: one statement reads the rows many requests ask
 * for (an account's revocation epoch, the item of `GET /jobs/ID`). On PostgreSQL each statement is
 * a round trip (a write to the server's socket, its parse and execution, a read of its answer); on
 * SQLite a call into the library with its own fixed cost; either is paid once for many. A
 * transaction's reads are its own, and run at once.
 *
 * A request's row is read by a statement sent after the request asked (never one already on its
 * way), so what it reads is at least as new as the request: a change committed before a request
 * arrived is seen by that request, as with a statement of its own. At most one statement per
 * group (a statement's shape and its other values, such as the account) is on its way at a time:
 * the requests that ask while one is wait for the next, sent as soon as it is answered, and share
 * it. Under load the requests of a whole round trip share one statement instead of one each; a
 * lone request waits for nothing but its own turn of the event loop.
 *
 * A statement reads at most MAX ids (padded to a power of two with its last id: a bounded set of
 * shapes, each prepared once per connection); a larger batch is read by several at once.
 */
export interface SharedRead<R> {
  /** Names the statement's shape, apart from its number of ids (a key of `query` in src/db/runner.ts). */
  key: string;
  /** The statement's other slots' values; requests share a statement only with the same values. */
  values: Record<string, string | number>;
  /** The statement for `ids` (slots), with the other values as `slot(name)`. */
  build: (ids: number[]) => Compilable<R>;
  /** The id a row answers. */
  idOf: (row: R) => number;
}

/** A read as this file runs it: `many`, each id answers every row of it, in the statement's order (readSharedList). */
type Read<R> = SharedRead<R> & { many?: boolean };

interface Waiter<R> {
  resolve: (answer: R | R[] | undefined) => void;
  reject: (err: unknown) => void;
}
interface Group {
  /** The requests waiting for the next statement, by the id they asked. */
  next?: Map<number, Waiter<unknown>[]>;
  /** A statement is on its way (or about to be sent): the next waits for it. */
  busy: boolean;
}

const MAX = 32;
const groups = new WeakMap<object, Map<string, Group>>();

/** The row of `id` (undefined when none), read with the rows other requests ask at the same moment. */
export function readShared<R>(db: object, read: SharedRead<R>, id: number): Promise<R | undefined> {
  return shared(db, read, id) as Promise<R | undefined>;
}

/** The rows of `id` (an item's list; none: empty), read with those other requests ask at the same moment. */
export function readSharedList<R>(db: object, read: SharedRead<R>, id: number): Promise<R[]> {
  return shared(db, { ...read, many: true }, id) as Promise<R[]>;
}

function shared<R>(db: object, read: Read<R>, id: number): Promise<unknown> {
  if (inTransaction(db)) return readNow(db, read, [id]).then((rows) => (read.many ? rows : rows[0]));
  let byGroup = groups.get(db);
  if (!byGroup) groups.set(db, (byGroup = new Map()));
  const name = `${read.many ? 'many|' : ''}${read.key}|${Object.values(read.values).join('|')}`;
  let group = byGroup.get(name);
  if (!group) byGroup.set(name, (group = { busy: false }));
  if (!group.next) {
    group.next = new Map();
    if (!group.busy) send(db, byGroup, name, group, read);
  }
  const batch = group.next;
  return new Promise<unknown>((resolve, reject) => {
    const waiter = { resolve, reject } as Waiter<unknown>;
    const waiting = batch.get(id);
    if (waiting) waiting.push(waiter);
    else batch.set(id, [waiter]);
  });
}

/** Sends the next statement once this turn's requests have joined it; then the one after, if any asked. */
function send<R>(db: object, byGroup: Map<string, Group>, name: string, group: Group, read: Read<R>): void {
  group.busy = true;
  setImmediate(() => {
    const taken = group.next!;
    group.next = undefined;
    void answer(db, read, taken).finally(() => {
      group.busy = false;
      if (group.next) send(db, byGroup, name, group, read);
      else byGroup.delete(name);
    });
  });
}

async function answer<R>(db: object, read: Read<R>, batch: Map<number, Waiter<unknown>[]>): Promise<void> {
  const all = [...batch.keys()];
  const chunks: number[][] = [];
  for (let i = 0; i < all.length; i += MAX) chunks.push(all.slice(i, i + MAX));
  await Promise.all(
    chunks.map(async (ids) => {
      try {
        const rows = await readNow(db, read, ids);
        const found = new Map<number, R | R[]>();
        for (const r of rows) {
          const id = read.idOf(r);
          if (!read.many) found.set(id, r);
          else if (found.has(id)) (found.get(id) as R[]).push(r);
          else found.set(id, [r]);
        }
        for (const id of ids) for (const w of batch.get(id)!) w.resolve(found.get(id) ?? (read.many ? [] : undefined));
      } catch (err) {
        for (const id of ids) for (const w of batch.get(id)!) w.reject(err);
      }
    }),
  );
}

/** One statement for `ids` (at most MAX), their number padded to a power of two. */
function readNow<R>(db: object, read: Read<R>, ids: number[]): Promise<R[]> {
  const n = ids.length === 1 ? 1 : 2 ** Math.ceil(Math.log2(ids.length));
  const values: Record<string, unknown> = { ...read.values };
  for (let i = 0; i < n; i++) values[`id${i}`] = ids[Math.min(i, ids.length - 1)];
  return query<R>(
    db,
    `shared|${read.many ? 'many|' : ''}${read.key}|${n}`,
    () => read.build(Array.from({ length: n }, (_, i) => slot<number>(`id${i}`))),
    values,
    { oneRow: n === 1 && !read.many },
  );
}
