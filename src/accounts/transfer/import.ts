import { PassThrough } from 'node:stream';
import type { Database } from '../../db/index.js';
import { untyped, type Executor } from '../../db/tx.js';
import { insertRows, query, slot } from '../../db/runner.js';
import { addLogins, takenLogins } from '../../auth/logins.js';
import type { Registry } from '../../collections/machinery/registry.js';
import type { Collection, Columns } from '../../collections/machinery/collection.js';
import { REFERENCE_TABLES } from '../../collections/machinery/fields.js';
import { searchTextOf } from '../../collections/machinery/search.js';
import {
  restoreColumns,
  ImportError,
  rowOf,
  transferPlan,
  type PendingLinks,
  type PendingRef,
} from '../../collections/machinery/transfer.js';
import type { BlobStore, StagedBlob } from '../../storage/blobs.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from './export.js';

export { ImportError };

export interface ImportResult {
  account: { id: number };
  items: number;
  /** The imported webhooks' new secrets (shown this once). */
  webhooks: { id: number; secret: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_FILE_BYTES = Number.MAX_SAFE_INTEGER;

/** A file's bytes being staged from its lines. */
interface Receiving {
  oldId: number;
  sha256: string;
  /** Started at the file's first line of bytes: a file exported without them has none. */
  pass?: PassThrough;
  staged?: Promise<StagedBlob>;
}

/**
 * Imports an export (PRODUCT §19) into a new account, in one transaction: every line or none. New
 * ids, every reference remapped; numbers, `created` and `modified` kept; webhooks get new secrets.
 * A line that cannot be taken fails the import with its number (`line 3: …`).
 */
export async function importAccount(
  database: Database,
  registry: Registry,
  blobs: BlobStore | undefined,
  lines: AsyncIterable<string>,
): Promise<ImportResult> {
  const plan = transferPlan(registry.list);
  const byName = new Map(plan.order.map((c) => [c.name, c]));
  const staged: StagedBlob[] = [];
  try {
    return await database.transaction(async (db) => {
      const ids = new Map<string, IdMap>();
      const idsOf = (name: string) => {
        let m = ids.get(name);
        if (!m) ids.set(name, (m = new IdMap()));
        return m;
      };
      const remap = (target: string, id: number, member: string) => {
        const to = ids.get(target)?.get(id);
        if (to === undefined) throw new ImportError(`'${member}' names ${target} ${id}, not seen before this line`);
        return to;
      };
      // Collections whose lines are behind us: those placed before the current one in the plan (roles,
      // written with the account, before all), whether or not the export held items of them (an
      // account without skills). A deferred reference to one is written as soon as its target is in,
      // instead of being kept to the end (the import's memory).
      const position = new Map(plan.order.map((c, i) => [c.name, i]));
      const isClosed = (name: string) => current !== undefined && (position.get(name) ?? -1) < position.get(current)!;
      let current: string | undefined;
      let n = 0;
      let accountId = 0;
      let logo: number | null = null;
      let items = 0;
      const webhooks: ImportResult['webhooks'] = [];
      let links: { line: number; table: string; own: number; pending: PendingLinks }[] = [];
      let later: { line: number; table: string; id: number; ref: PendingRef }[] = [];
      let settleAt = SETTLE_EVERY;
      const writeLinks = async (all: boolean) => {
        const kept: typeof links = [];
        // The rows of each link table, written by a few statements (insertRows' runs), not one per item.
        const byTable = new Map<string, { rows: Columns[]; first: number; last: number; table: string }>();
        for (const entry of links) {
          const { line, table, own, pending } = entry;
          const { field } = pending;
          if (
            !all &&
            !(isClosed(field.target) && pending.ids.every((id) => idsOf(field.target).get(id) !== undefined))
          ) {
            kept.push(entry);
            continue;
          }
          let to = byTable.get(field.through);
          if (!to) byTable.set(field.through, (to = { rows: [], first: line, last: line, table }));
          try {
            for (const id of pending.ids)
              to.rows.push({
                account_id: accountId,
                [field.own]: own,
                [field.other]: remap(field.target, id, field.target),
              });
          } catch (err) {
            throw lineError(line, err, database, table);
          }
          to.last = line;
        }
        links = kept;
        for (const [through, { rows, first, last, table }] of byTable)
          try {
            if (rows.length) await insertRows(db, through, rows);
          } catch (err) {
            throw lineError(first, err, database, table, last);
          }
      };
      const writeLater = async (all: boolean) => {
        const kept: typeof later = [];
        for (const entry of later) {
          const { line, table, id, ref } = entry;
          if (!all && !(isClosed(ref.target) && idsOf(ref.target).get(ref.id) !== undefined)) {
            kept.push(entry);
            continue;
          }
          try {
            await query(
              db,
              `import later|${table}|${ref.column}`,
              () =>
                untyped(db)
                  .updateTable(table)
                  .set({ [ref.column]: slot<number>('to') })
                  .where('account_id', '=', slot<number>('account'))
                  .where('id', '=', slot<number>('id')),
              { to: remap(ref.target, ref.id, ref.member), account: accountId, id },
            );
          } catch (err) {
            throw lineError(line, err, database);
          }
        }
        later = kept;
      };
      /** The deferred references whose targets are in, written (all of them at the end). */
      const settle = async (all: boolean) => {
        await writeLinks(all);
        await writeLater(all);
      };
      let receiving: Receiving | undefined;
      const finishFile = async () => {
        if (!receiving) return;
        const r = receiving;
        receiving = undefined;
        if (!r.pass || !r.staged) return;
        r.pass.end();
        const blob = await r.staged;
        staged.push(blob);
        if (blob.sha256 !== r.sha256) throw new ImportError(`the bytes of file ${r.oldId} do not match its sha256`);
      };

      // Consecutive items of one collection go in together (one statement per run of rows).
      let batch: Batch | undefined;
      const flush = async () => {
        if (!batch) return;
        const { c, entries } = batch;
        batch = undefined;
        await loginsFree(db, entries);
        let made: { id: number }[];
        try {
          made = await insertRows<{ id: number }>(
            db,
            c.table,
            entries.map((e) => e.row),
            ['id'],
          );
        } catch (err) {
          throw lineError(entries[0].line, err, database, c.table, entries[entries.length - 1].line);
        }
        entries.forEach((e, i) => {
          const newId = Number(made[i].id);
          idsOf(c.name).set(e.oldId, newId);
          items++;
          for (const pending of e.lists)
            if (pending.ids.length) links.push({ line: e.line, table: c.table, own: newId, pending });
          for (const ref of e.refs) later.push({ line: e.line, table: c.table, id: newId, ref });
          if (e.answer && c.name === 'webhooks') webhooks.push({ id: newId, secret: String(e.answer.secret) });
        });
        const logins = entries.flatMap((e, i) =>
          e.login ? [{ login: e.login, accountId, userId: Number(made[i].id) }] : [],
        );
        if (logins.length)
          try {
            await addLogins(db, logins);
          } catch (err) {
            throw lineError(entries[0].line, err, database, 'logins', entries[entries.length - 1].line);
          }
      };
      for await (const text of lines) {
        n++;
        try {
          if (text.trim() === '') continue;
          let line: unknown;
          try {
            line = JSON.parse(text);
          } catch {
            throw new ImportError('is not JSON');
          }
          if (!isObject(line)) throw new ImportError('is not a JSON object');
          if (n === 1) {
            if (line.format !== EXPORT_FORMAT) throw new ImportError(`is not an ${EXPORT_FORMAT} header`);
            if (line.version !== EXPORT_VERSION)
              throw new ImportError(
                `is version ${JSON.stringify(line.version)}; this server reads version ${EXPORT_VERSION}`,
              );
            if (!isObject(line.account)) throw new ImportError("has no 'account'");
            ({ accountId, logo } = await insertAccount(db, line.account, idsOf('roles')));
            continue;
          }
          if (isObject(line.file) && typeof line.base64 === 'string') {
            if (!receiving || receiving.oldId !== line.file.id)
              throw new ImportError(`bytes of file ${JSON.stringify(line.file.id)}, which is not the file just before`);
            if (!receiving.pass && blobs) {
              receiving.pass = new PassThrough();
              receiving.staged = blobs.stage(receiving.pass, MAX_FILE_BYTES);
              receiving.staged.catch(() => {});
            }
            if (receiving.pass && !receiving.pass.write(Buffer.from(line.base64, 'base64')))
              await new Promise((resolve) => receiving!.pass!.once('drain', resolve));
            continue;
          }
          await finishFile();
          const c = typeof line.collection === 'string' ? byName.get(line.collection) : undefined;
          if (!c) throw new ImportError(`names no collection an export carries: ${JSON.stringify(line.collection)}`);
          if (!isObject(line.item) || typeof line.item.id !== 'number')
            throw new ImportError("has no 'item' with an id");
          const item = line.item;
          // The items of earlier collections are in before this one's references are remapped.
          if (batch && batch.c !== c) await flush();
          if (current !== c.name) {
            current = c.name;
            await settle(false);
          } else if (links.length + later.length >= settleAt) {
            await settle(false);
            // What waits for a collection still to come stays: looked at again only once as many
            // more wait (else every line would rescan them all: quadratic in charges of invoices).
            settleAt = Math.max(SETTLE_EVERY, 2 * (links.length + later.length));
          }
          const { row, links: lists, later: refs } = rowOf(c, plan, item, accountId, remap);
          const answer = c.transfer?.onImport?.(row);
          const login = prepareRow(c, row, accountId);
          const key = `${c.name}|${Object.keys(row).join(',')}`;
          if (batch && (batch.key !== key || batch.entries.length >= BATCH)) await flush();
          batch ??= { c, key, entries: [] };
          batch.entries.push({ row, oldId: item.id as number, line: n, lists, refs, answer, login });
          if (c.name === 'files' && typeof row.sha256 === 'string')
            receiving = { oldId: item.id as number, sha256: row.sha256 };
        } catch (err) {
          throw lineError(n, err, database);
        }
      }
      if (n === 0) throw new ImportError('line 1: the input is empty');
      await flush();
      try {
        await finishFile();
      } catch (err) {
        throw lineError(n, err, database);
      }
      await settle(true);
      if (logo !== null)
        await untyped(db)
          .updateTable('accounts')
          .set({ logo: JSON.stringify({ id: remap('files', logo, 'account.logo') }) })
          .where('id', '=', accountId)
          .execute();
      for (const blob of staged) await blob.commit();
      return { account: { id: accountId }, items, webhooks };
    });
  } finally {
    for (const blob of staged) if (!blob.committed) await blob.discard().catch(() => {});
  }
}

function lineError(n: number, err: unknown, database: Database, table?: string, last?: number): ImportError {
  if (last !== undefined && last !== n) return lineError(n, err, database, table).withRange(last);
  if (err instanceof ImportError)
    return new ImportError(/^lines? \d/.test(err.message) ? err.message : `line ${n}: ${err.message}`);
  if (database.dialect.isUniqueViolation(err))
    return new ImportError(`line ${n}: a value unique in the account is there twice${table ? ` (${table})` : ''}`);
  if (database.dialect.isForeignKeyViolation(err)) return new ImportError(`line ${n}: a reference names no item`);
  return new ImportError(`line ${n}: ${(err as Error).message}`);
}

/** The new account's row, its roles (ids remapped by kind) and counters; the logo is set at the end. */
async function insertAccount(
  db: Executor,
  account: Record<string, unknown>,
  roles: IdMap,
): Promise<{ accountId: number; logo: number | null }> {
  const row: Columns = { licenses: 1, country_code: 0 };
  let logo: number | null = null;
  for (const [name, field] of Object.entries(REFERENCE_TABLES.accounts.fields)) {
    if (field.kind !== 'scalar' || account[name] === undefined) continue;
    if (name === 'logo') {
      logo = (account.logo as { id?: number } | null)?.id ?? null;
      continue;
    }
    restoreColumns(field, account[name], `account.${name}`, row);
  }
  for (const t of ['created', 'modified']) {
    const ms = Date.parse(String(account[t]));
    row[t] = Number.isFinite(ms) ? ms : Date.now();
  }
  if (typeof row.company_name !== 'string' || typeof row.currency !== 'string' || typeof row.time_zone !== 'string')
    throw new ImportError("'account' needs companyName, currency and timeZone");
  const { id } = await untyped(db).insertInto('accounts').values(row).returning('id').executeTakeFirstOrThrow();
  if (!Array.isArray(account.roles) || !account.roles.length)
    throw new ImportError("'account.roles' must list its roles");
  for (const r of account.roles as { id: number; name: string; kind: string }[]) {
    const made = await untyped(db)
      .insertInto('roles')
      .values({ account_id: id, name: r.name, kind: r.kind })
      .returning('id')
      .executeTakeFirstOrThrow();
    roles.set(r.id, made.id);
  }
  const counters = isObject(account.counters) ? account.counters : {};
  for (const [name, value] of Object.entries(counters))
    await untyped(db)
      .insertInto('counters')
      .values({ account_id: id, name, value: Number(value) })
      .execute();
  return { accountId: id, logo };
}

/** Rows inserted by one statement at most. */
const BATCH = 256;
/** Deferred references kept before those whose targets are in are written. */
const SETTLE_EVERY = 1024;

/**
 * Old ids to new ones for one collection, in two typed arrays: an export lists a collection's
 * items in ascending id order, so they are appended sorted and found by binary search (16 bytes
 * an item, where a Map of numbers took several times that). An id out of that order goes in a Map.
 */
export class IdMap {
  private old = new Float64Array(1024);
  private made = new Float64Array(1024);
  private size = 0;
  private other = new Map<number, number>();

  set(oldId: number, newId: number): void {
    if (this.size && oldId <= this.old[this.size - 1]) {
      const at = this.find(oldId);
      if (at >= 0) this.made[at] = newId;
      else this.other.set(oldId, newId);
      return;
    }
    if (this.size === this.old.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.old = grow(this.old);
      this.made = grow(this.made);
    }
    this.old[this.size] = oldId;
    this.made[this.size++] = newId;
  }

  get(oldId: number): number | undefined {
    const at = this.find(oldId);
    return at >= 0 ? this.made[at] : this.other.get(oldId);
  }

  private find(oldId: number): number {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.old[mid];
      if (v === oldId) return mid;
      if (v < oldId) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

interface Batch {
  c: Collection;
  /** The collection and the columns set: the rows of one statement share both. */
  key: string;
  entries: {
    row: Columns;
    oldId: number;
    line: number;
    lists: PendingLinks[];
    refs: PendingRef[];
    answer: Record<string, unknown> | undefined;
    login?: string;
  }[];
}

/**
 * An item's row made ready: its account and searched text. Answers its login, if it has one (unique
 * in the whole service: checked free per batch, written once the rows are in).
 */
function prepareRow(c: Collection, row: Columns, accountId: number): string | undefined {
  row.account_id = accountId;
  if (c.search) row.search_text = searchTextOf(c, row);
  const login = c.fields.login?.kind === 'scalar' && typeof c.fields.login.unique === 'object' ? row.login : undefined;
  return typeof login === 'string' ? login : undefined;
}

/** Refuses a batch holding a login another account has (unique in the whole server), by its line. */
async function loginsFree(db: Executor, entries: Batch['entries']): Promise<void> {
  const asked = entries.filter((e) => e.login !== undefined);
  if (!asked.length) return;
  const taken = new Set(
    await takenLogins(
      db,
      asked.map((e) => e.login!),
    ),
  );
  const first = asked.find((e) => taken.has(e.login!));
  if (first) throw new ImportError(`line ${first.line}: the login '${first.login}' already exists in this server`);
}
