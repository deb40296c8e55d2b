import type { ApiErrorBody } from '../../errors.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/index.js';
import type { Executor } from '../../db/tx.js';
import type { BlobStore } from '../../storage/blobs.js';
import type { Caller, Collection, Item, Op, Row } from './collection.js';

/**
 * The machinery's contracts: the shapes of the services a declaration's rules and actions are
 * given (the registry, the writer, its requests and answers, the change recorder), declared here
 * as types only, with the declarations (collection.ts, fields.ts) the leaf of the machinery:
 * the pipeline and the services implement them and import them, never the other way round.
 */

/** Every collection the API serves, and what is derived from their declarations. */
export interface Registry {
  list: readonly Collection[];
  get(name: string): Collection | undefined;
  /** `<collection>.read` and `<collection>.write` of every collection, in registry order (see permissionFor). */
  permissions: readonly string[];
}

/** What a caller asks of the write pipeline. */
export interface WriteRequest {
  collection: Collection;
  caller: Caller;
  op: Op;
  /** The items as the request carried them, not yet validated. */
  input: unknown[];
  /** The id of an item endpoint (`PATCH /jobs/5`): every item must name it. */
  urlId?: number;
  /** What the caller attaches beside each item, never through it (an upload's staged bytes). */
  attached?: unknown[];
  /** `If-Match` of an item endpoint (with urlId): checked against the item in the transaction (412). */
  ifMatch?: string;
  /** Runs inside the transaction once the answer is known, before the commit (an idempotency record). */
  seal?(tx: Executor, result: WriteSuccess): Promise<void>;
}

export interface WriteMetadata {
  receivedItemsCount: number;
  validItems: number[];
  invalidItems: number[];
}

export interface WriteSuccess {
  result: 'success';
  items: Item[];
  metadata: WriteMetadata;
}

export interface WriteFailure {
  result: 'failure';
  failures: { rawData: unknown; errors: ApiErrorBody[] }[];
  metadata: WriteMetadata;
}

export type WriteResult = WriteSuccess | WriteFailure;

export type ChangeType = 'created' | 'updated' | 'deleted';

/** One committed change of one item, with the item before and after (default fields). */
export interface Change {
  collection: Collection;
  id: number;
  type: ChangeType;
  /** As it was (null when created). */
  before: Item | null;
  /** As it is now (null when deleted). */
  after: Item | null;
  /** On `updated`: each default field that changed, old and new; otherwise null. */
  changes: Record<string, { old: unknown; new: unknown }> | null;
}

/**
 * The one place a cross-cutting feature sees every change of every item: called inside the write
 * transaction, after every row was written and before the commit. Whatever it writes commits or
 * rolls back with the change itself.
 */
export type ChangeHook = (tx: Executor, caller: Caller, changes: Change[]) => Promise<void>;

/**
 * What a transaction's change recorder offers the rules and actions (write/changes.ts
 * `ChangeRecorder`): every row about to change is touched first, and `settle` reports each
 * difference once.
 */
export interface ChangeRecording {
  /** Rows about to change: their items as they are now are kept. */
  touch(c: Collection, ids: number[]): Promise<void>;
  /** Like touch, for rows the caller has already loaded whole. */
  touchRows(c: Collection, rows: Row[]): Promise<void>;
  /** Rows about to change beside the batch's own writes; their `modified` moves at settle. */
  touchBeside(target: Collection | string, ids: number[]): Promise<void>;
  /** A collection of the registry by name. */
  collection(name: string): Collection;
  /** Rows just inserted. */
  created(c: Collection, ids: number[]): void;
  /** An item's association list saved (its link rows written): settle reads its lists again. */
  listSaved(c: Collection, id: number): void;
  /** Rows as the statement that wrote them returned them (RETURNING *). */
  wrote(c: Collection, rows: Row[]): void;
  /** Rows about to be deleted, and every row the database will change with them. */
  deleting(c: Collection, ids: number[]): Promise<void>;
  /** The item as it is after the write (default fields), once settled. */
  item(c: Collection, id: number): Item | undefined;
  /** Reads every touched item again, reports the differences to the hooks, once. */
  settle(): Promise<Change[]>;
}

export interface Writer {
  /** Every create, update and delete of every collection: all items or none, in one transaction. */
  write(request: WriteRequest): Promise<WriteResult>;
  /**
   * One transaction with a change recorder, for anything else that changes items (an account and
   * its seeds): the hooks see its changes before the commit, as they see every write's.
   */
  transact<T>(caller: Caller, fn: (tx: Executor, changes: ChangeRecording) => Promise<T>): Promise<T>;
}

/** What the HTTP layer, the CLI and actions work with, made once per process (src/services.ts). */
export interface Services {
  config: Config;
  database: Database;
  registry: Registry;
  writer: Writer;
  /** Where uploaded bytes live. */
  blobs: BlobStore;
}
