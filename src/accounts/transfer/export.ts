import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from '../../db/index.js';
import { untyped, type Executor } from '../../db/tx.js';
import type { Registry } from '../../collections/machinery/registry.js';
import type { Collection, Item, Row } from '../../collections/machinery/collection.js';
import { REFERENCE_TABLES } from '../../collections/machinery/fields.js';
import { present } from '../../collections/machinery/present.js';
import { transferPlan } from '../../collections/machinery/transfer.js';
import { isoTime, toApi } from '../../collections/machinery/kinds/index.js';
import type { BlobStore } from '../../storage/blobs.js';
import { operator } from '../service.js';

export const EXPORT_FORMAT = 'fsm-export';
export const EXPORT_VERSION = 1;
/**
 * Rows read per statement: what the export holds in memory at most, whatever the account's size,
 * and its turn on the server's thread between two of other requests' (each page ends a turn).
 */
const PAGE = 100;
/** A file's bytes per line, before base64 (PRODUCT §19). */
export const CHUNK = 1024 * 1024;

export interface ExportOptions {
  /** With each file's bytes as `{"file":{id},"base64":…}` lines. */
  files?: boolean;
  /** With the collections' hidden members (users' `passwordHash`): the operator's export only. */
  hidden?: boolean;
  publicUrl?: string;
  now?: number;
  /** Rows read per statement (PAGE unless said): the server's GET /export takes smaller turns. */
  page?: number;
}

export class ExportError extends Error {}

/** The account's own row as its export's first line shows it, with its roles and its counters. */
async function accountOf(db: Executor, accountId: number): Promise<Item> {
  const row = (await untyped(db).selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst()) as
    Row | undefined;
  if (!row) throw new ExportError(`there is no account ${accountId}`);
  const account: Item = { id: row.id };
  for (const [name, field] of Object.entries(REFERENCE_TABLES.accounts.fields))
    if (field.kind === 'scalar') account[name] = toApi(field, row[field.column]);
  account.created = isoTime(Number(row.created));
  account.modified = isoTime(Number(row.modified));
  account.roles = await untyped(db)
    .selectFrom('roles')
    .select(['id', 'name', 'kind'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  const counters = await untyped(db)
    .selectFrom('counters')
    .select(['name', 'value'])
    .where('account_id', '=', accountId)
    .orderBy('name')
    .execute();
  account.counters = Object.fromEntries(counters.map((r) => [r.name, Number(r.value)]));
  return account;
}

/**
 * An account's export (PRODUCT §19), one JSON text a line given to `write` (which waits while the
 * reader is behind): read on one snapshot, a page of rows at a time, collections in reference order.
 */
export async function exportAccount(
  database: Database,
  registry: Registry,
  blobs: BlobStore | undefined,
  accountId: number,
  opts: ExportOptions,
  write: (line: string) => Promise<void> | void,
): Promise<{ items: number }> {
  const plan = transferPlan(registry.list);
  const caller = operator(accountId, opts.now ?? Date.now(), opts.publicUrl ?? '');
  return database.snapshot(async (db) => {
    const account = await accountOf(db, accountId);
    await write(JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, account }));
    let items = 0;
    for (const c of plan.order) {
      const projection = { fields: c.allFields, expand: new Map() };
      for (let after = 0; ;) {
        const rows = (await untyped(db)
          .selectFrom(c.table)
          .selectAll()
          .where('account_id', '=', accountId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(opts.page ?? PAGE)
          .execute()) as Row[];
        if (!rows.length) break;
        const presented = await present(db, c, caller, projection, rows);
        for (let i = 0; i < rows.length; i++) {
          const item = presented[i];
          if (opts.hidden)
            for (const [member, column] of Object.entries(c.transfer?.hidden ?? {}))
              item[member] = rows[i][column] ?? null;
          await write(JSON.stringify({ collection: c.name, item }));
          items++;
          if (opts.files && c.name === 'files') await writeBytes(blobs, rows[i], write);
        }
        after = Number(rows[rows.length - 1].id);
        // A page's turn ends here: while the reader keeps up no write waits for 'drain', and without
        // this the export ran on microtasks alone (W1 beside GET /export answered nothing).
        await nextTurn();
      }
    }
    return { items };
  });
}

/** A file's bytes in lines of at most CHUNK bytes; a file whose bytes are gone has none. */
async function writeBytes(blobs: BlobStore | undefined, row: Row, write: (line: string) => Promise<void> | void) {
  const stored = blobs && typeof row.sha256 === 'string' ? await blobs.open(row.sha256) : undefined;
  if (!stored) return;
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    if (!size) return;
    await write(JSON.stringify({ file: { id: row.id }, base64: Buffer.concat(pending).toString('base64') }));
    pending = [];
    size = 0;
  };
  for await (const chunk of stored.stream as AsyncIterable<Buffer>) {
    for (let at = 0; at < chunk.length;) {
      const part = chunk.subarray(at, at + CHUNK - size);
      pending.push(part);
      size += part.length;
      at += part.length;
      if (size === CHUNK) await flush();
    }
  }
  await flush();
}

/** Which collection the exported collections are, for callers that check permissions (GET /export). */
export const exportedCollections = (registry: Registry): Collection[] => transferPlan(registry.list).order;
