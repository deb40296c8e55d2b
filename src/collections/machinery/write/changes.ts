import { execute, untyped, type Executor } from '../../../db/runner.js';
import type { Caller, Collection, Item, Row } from '../collection.js';
import { ownersListing } from '../links.js';
import type { Projection } from '../modifiers.js';
import { present } from '../present.js';
import { rowsByIds } from '../read.js';
import type { Change, ChangeHook, ChangeRecording, Registry } from '../contracts.js';

export type { Change, ChangeHook, ChangeType } from '../contracts.js';

/** `modified` moves on every write: alone it is not a change. */
const IGNORED = new Set(['modified']);

const snapshotProjection = (c: Collection): Projection => ({ fields: c.defaultFields, expand: new Map() });

/**
 * Records what a transaction changes. Every row about to change is "touched" first, and its
 * item as it is then is kept; `settle` reads the same items again and reports each difference
 * once. Rows the database changes by itself (ON DELETE CASCADE and SET NULL, link rows) are
 * found from the declarations before a delete, so they are reported too.
 */
export class ChangeRecorder implements ChangeRecording {
  private readonly before = new Map<Collection, Map<number, Item | null>>();
  private settled?: Change[];
  private readonly afterItems = new Map<Collection, Map<number, Item>>();
  private readonly returned = new Map<Collection, Map<number, Row>>();
  /** The batch's own rows whose association lists were saved: settle reads those lists again. */
  private readonly listsSaved = new Map<Collection, Set<number>>();
  /** Rows changed beside the batch's own writes: their `modified` moves at settle. */
  private readonly beside = new Map<Collection, Set<number>>();

  constructor(
    private readonly db: Executor,
    private readonly caller: Caller,
    private readonly registry: Registry,
    private readonly hooks: readonly ChangeHook[],
  ) {}

  private of(c: Collection): Map<number, Item | null> {
    let m = this.before.get(c);
    if (!m) this.before.set(c, (m = new Map()));
    return m;
  }

  private async load(c: Collection, ids: number[]): Promise<Row[]> {
    return [...(await rowsByIds(this.db, c, this.caller, ids, 'all')).values()];
  }

  /** Rows about to change: their items as they are now are kept. */
  async touch(c: Collection, ids: number[]): Promise<void> {
    if (c.recorded === false) return;
    const seen = this.of(c);
    const fresh = [...new Set(ids)].filter((id) => !seen.has(id));
    await this.touchRows(c, await this.load(c, fresh));
    for (const id of fresh) if (!seen.has(id)) seen.set(id, null);
  }

  /** Like touch, for rows the caller has already loaded whole. */
  async touchRows(c: Collection, rows: Row[]): Promise<void> {
    if (c.recorded === false) return;
    const seen = this.of(c);
    const fresh = rows.filter((r) => !seen.has(r.id));
    const items = await present(this.db, c, this.caller, snapshotProjection(c), fresh);
    items.forEach((item) => seen.set(item.id as number, item));
  }

  /**
   * Rows about to change beside the batch's own writes (the items joining or leaving a list, rows
   * the database sets null): recorded like any change, and their `modified` moves with it at settle.
   */
  async touchBeside(target: Collection | string, ids: number[]): Promise<void> {
    const c = typeof target === 'string' ? this.registry.get(target) : target;
    if (!c || c.recorded === false || !ids.length) return;
    await this.touch(c, ids);
    this.movesModified(c, ids);
  }

  private movesModified(c: Collection, ids: number[]): void {
    let m = this.beside.get(c);
    if (!m) this.beside.set(c, (m = new Set()));
    for (const id of ids) m.add(id);
  }

  /** Rows just inserted. */
  /** A collection of the registry by name: a rule records the changes it makes to other collections' rows by it. */
  collection(name: string): Collection {
    const c = this.registry.get(name);
    if (!c) throw new Error(`no collection '${name}'`);
    return c;
  }

  created(c: Collection, ids: number[]): void {
    if (c.recorded === false) return;
    const seen = this.of(c);
    for (const id of ids) if (!seen.has(id)) seen.set(id, null);
  }

  /**
   * Rows as the statement that wrote them returned them (RETURNING *): `settle` takes them as they
   * are after the write instead of reading them again. Only for the batch's own rows, written once
   * each, which nothing later in the transaction changes (a rule's `after` acts on other rows).
   */
  wrote(c: Collection, rows: Row[]): void {
    if (c.recorded === false) return;
    let m = this.returned.get(c);
    if (!m) this.returned.set(c, (m = new Map()));
    for (const r of rows) m.set(r.id, r);
  }

  /** An item's association list saved (its link rows written): settle reads its lists again. */
  listSaved(c: Collection, id: number): void {
    let m = this.listsSaved.get(c);
    if (!m) this.listsSaved.set(c, (m = new Set()));
    m.add(id);
  }

  /**
   * The returned rows whose lists are as they were before the write (none for a created item): no
   * list of theirs was saved and no change beside the batch reached them (those leave `returned`).
   */
  private knownLists(c: Collection, seen: Map<number, Item | null>, returned?: Map<number, Row>): Map<number, Item> {
    const known = new Map<number, Item>();
    if (!returned) return known;
    const saved = this.listsSaved.get(c);
    for (const id of returned.keys()) {
      if (saved?.has(id) || !seen.has(id)) continue;
      known.set(id, seen.get(id) ?? { id });
    }
    return known;
  }

  /** Rows about to be deleted, and every row the database will change with them. */
  async deleting(c: Collection, ids: number[]): Promise<void> {
    await this.touch(c, ids);
    if (!ids.length) return;
    for (const other of this.registry.list) {
      for (const field of Object.values(other.fields)) {
        if (other.recorded === false) continue;
        if (field.kind === 'assoc' && field.target === c.name && field.onDelete !== 'restrict') {
          const rows = await execute<Row>(
            this.db,
            untyped(this.db)
              .selectFrom(other.table)
              .selectAll()
              .where('account_id', '=', this.caller.accountId)
              .where(field.column, 'in', ids),
          );
          await this.touchRows(other, rows);
          if (field.onDelete === 'cascade')
            await this.deleting(
              other,
              rows.map((r) => r.id),
            );
          else
            this.movesModified(
              other,
              rows.map((r) => r.id as number),
            );
        } else if (field.kind === 'assocList' && field.target === c.name) {
          await this.touchBeside(other, await ownersListing(this.db, field, this.caller.accountId, ids));
        }
      }
    }
  }

  /** The item as it is after the write (default fields), once settled. */
  item(c: Collection, id: number): Item | undefined {
    return this.afterItems.get(c)?.get(id);
  }

  /** Reads every touched item again, reports the differences to the hooks, once. */
  async settle(): Promise<Change[]> {
    if (this.settled) return this.settled;
    await this.moveModified();
    const out: Change[] = [];
    for (const [c, seen] of this.before) {
      const returned = this.returned.get(c);
      const rows = returned ? [...returned.values()] : [];
      const unknown = [...seen.keys()].filter((id) => !returned?.has(id));
      if (unknown.length) rows.push(...(await this.load(c, unknown)));
      const items = await present(
        this.db,
        c,
        this.caller,
        snapshotProjection(c),
        rows,
        this.knownLists(c, seen, returned),
      );
      const after = new Map(items.map((it) => [it.id as number, it]));
      this.afterItems.set(c, after);
      for (const [id, before] of seen) {
        const now = after.get(id) ?? null;
        if (!before && now) out.push({ collection: c, id, type: 'created', before: null, after: now, changes: null });
        else if (before && !now) out.push({ collection: c, id, type: 'deleted', before, after: null, changes: null });
        else if (before && now) {
          const changes = diff(c, before, now);
          if (changes) out.push({ collection: c, id, type: 'updated', before, after: now, changes });
        }
      }
    }
    this.settled = out;
    for (const hook of this.hooks) await hook(this.db, this.caller, out);
    return out;
  }

  /** `modified` of the rows changed beside the batch's own writes (those still there): every change moves it. */
  private async moveModified(): Promise<void> {
    for (const [c, ids] of this.beside) {
      const modified = c.fields.modified;
      if (modified?.kind !== 'scalar' || !ids.size) continue;
      await untyped(this.db)
        .updateTable(c.table)
        .set({ [modified.column]: this.caller.now })
        .where('account_id', '=', this.caller.accountId)
        .where('id', 'in', [...ids])
        .execute();
      const returned = this.returned.get(c);
      for (const id of ids) returned?.delete(id);
    }
    this.beside.clear();
  }
}

function diff(c: Collection, before: Item, after: Item): Change['changes'] {
  let changes: Change['changes'] = null;
  for (const name of c.defaultFields) {
    if (IGNORED.has(name) || c.fields[name].kind === 'computed') continue;
    const a = JSON.stringify(before[name] ?? null);
    const b = JSON.stringify(after[name] ?? null);
    if (a !== b) (changes ??= {})[name] = { old: before[name] ?? null, new: after[name] ?? null };
  }
  return changes;
}
