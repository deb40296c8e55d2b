import type { ApiErrorBody } from '../../../errors.js';
import type { Executor } from '../../../db/tx.js';
import type { Columns, Item, ItemContext, Row, TxItemContext } from '../collection.js';
import type { CustomState } from '../custom-definitions.js';
import type { ChangeRecording, WriteRequest } from '../contracts.js';

export type { WriteRequest } from '../contracts.js';

/** The state of one write as it moves through the steps. */
export class Batch {
  items: Item[] = [];
  /** Per item: its id (update, delete), 0 when it has none. */
  ids: number[] = [];
  readonly errors: ApiErrorBody[][];
  /** Per item: the columns it sets. */
  rows: Columns[] = [];
  /** Per item: the stored row (update, delete), once loaded in the transaction. */
  existing: (Row | undefined)[] = [];
  /** PostgreSQL: the rows lockRows locked, whole (read in the same statement). */
  locked?: Map<number, Row>;
  /** The written ids, in request order. */
  written: number[] = [];
  access: 'all' | 'own' = 'all';
  /** The custom fields of the items, once checked (src/collections/machinery/custom.ts). */
  custom?: CustomState;
  private readonly found = new Map<string, Promise<unknown>>();
  /** The rows as they were before the transaction: each attempt of it starts from these. */
  private pristine?: Columns[];

  constructor(readonly request: WriteRequest) {
    this.errors = request.input.map(() => []);
  }

  /** Before each attempt of the transaction: what a rolled-back attempt left (rows filled, ids written, lookups) is undone. */
  beginAttempt(): void {
    if (this.pristine) this.rows = this.pristine.map((r) => ({ ...r }));
    else this.pristine = this.rows.map((r) => ({ ...r }));
    this.written = [];
    this.existing = [];
    this.locked = undefined;
    this.custom = undefined;
    this.found.clear();
  }

  /** Columns made outside the transaction once every check passed (slowColumns): every attempt writes them. */
  addColumns(columns: (Columns | undefined)[]): void {
    columns.forEach((cols, i) => {
      if (!cols) return;
      Object.assign(this.rows[i], cols);
      if (this.pristine) Object.assign(this.pristine[i], cols);
    });
  }

  itemContext(index: number): ItemContext {
    const r = this.request;
    return {
      caller: r.caller,
      op: r.op,
      item: this.items[index],
      index,
      existing: this.existing[index],
      row: this.rows[index] ?? {},
      attached: r.attached?.[index],
    };
  }

  /** What `fn` finds, looked up once per attempt under `key` (TxItemContext.once). */
  private readonly once = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    let p = this.found.get(key) as Promise<T> | undefined;
    if (!p) this.found.set(key, (p = fn()));
    return p;
  };

  txContext(index: number, db: Executor, changes: ChangeRecording): TxItemContext {
    return { ...this.itemContext(index), db, changes, once: this.once };
  }
}
