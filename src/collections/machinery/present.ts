import { untyped, type Executor } from '../../db/tx.js';
import type { Caller, Collection, EB, Item, Row } from './collection.js';
import { gateThrough, passes } from './access.js';
import type { AssocField } from './fields.js';
import { loadLists } from './links.js';
import type { Projection } from './modifiers.js';
import { asIs, kindOf, toApi } from './kinds/index.js';
import { visibleKeys, visibleValues } from './custom.js';

/**
 * The associated items' members, as the target collection lets the caller read them (the gate and
 * the role's scope, as `where` on the same members): a member named in `fields` of a collection the
 * caller cannot read is a 403; with `[*]` such an association stays `{id}`, and so does an item
 * outside the caller's scope.
 */
async function loadAssoc(db: Executor, caller: Caller, field: AssocField, ids: number[], members: Set<string> | '*') {
  const target = field.targetCollection;
  let access: 'all' | 'own' = 'all';
  // `client.id` is the id every projection of `client` shows: it reads nothing of the target.
  if (members !== '*' && [...members].every((m) => m === 'id')) return new Map<number, unknown>();
  if (target) {
    if (members === '*' && !passes(target, caller, 'read')) return new Map<number, unknown>();
    access = gateThrough(target, caller);
  }
  const names = Object.keys(field.members).filter((m) => members === '*' || members.has(m));
  const rows = await untyped(db)
    .selectFrom(field.table)
    .select(['id', ...names.map((m) => `${field.members[m].column} as ${m}`)])
    .where('id', 'in', ids)
    .where(field.accountColumn, '=', caller.accountId)
    .$if(access === 'own' && !!target?.policy.own, (q) =>
      q.where((eb: EB) => target!.policy.own!(caller, eb, field.table)),
    )
    .execute();
  return new Map(
    rows.map((r) => [
      r.id as number,
      Object.fromEntries([['id', r.id], ...names.map((m) => [m, toApi(field.members[m], r[m])])]),
    ]),
  );
}

// The default projection is one array per collection: its key is made once.
const fieldsKeys = new WeakMap<string[], string>();
export function fieldsKey(fields: string[]): string {
  let key = fieldsKeys.get(fields);
  if (key === undefined) fieldsKeys.set(fields, (key = fields.join(',')));
  return key;
}

/** What a field's value is built from besides its row: associations and lists loaded per batch. */
interface Loaded {
  expanded: Map<string, Map<number, unknown>>;
  lists: Map<string, Map<number, Record<string, unknown>[]>>;
  computed: Map<string, unknown[]>;
  /** The keys of the account's live custom field definitions (undefined: no row has a value). */
  customKeys?: Set<string>;
}
type Put = (row: Row, item: Item, index: number, loaded: Loaded) => void;

/** One writer per field, decided from the declarations once per projection rather than per row. */
function writer(c: Collection, name: string): Put {
  const field = c.fields[name];
  switch (field.kind) {
    case 'scalar': {
      const { column } = field;
      if (field.customFields) {
        return (row, item, _i, loaded) => {
          item[name] = visibleValues(row[column], loaded.customKeys);
        };
      }
      const kind = kindOf(field);
      const convert = kind.toApi(field);
      const columns = kind.columns(field);
      // Text needs no conversion: the common case makes no call.
      if (convert === asIs) {
        return (row, item) => {
          item[name] = row[column] ?? null;
        };
      }
      if (columns.length === 1) {
        return (row, item) => {
          item[name] = convert(row[column]);
        };
      }
      return (row, item) => {
        item[name] = convert(...columns.map((col) => row[col]));
      };
    }
    case 'object': {
      // Members that are null are left out of the object.
      const members = Object.entries(field.members).map(([key, m]) => ({
        key,
        columns: kindOf(m).columns(m),
        convert: kindOf(m).toApi(m),
      }));
      return (row, item) => {
        const o: Record<string, unknown> = {};
        for (const { key, columns, convert } of members) {
          const v = columns.length === 1 ? convert(row[columns[0]]) : convert(...columns.map((col) => row[col]));
          if (v !== null) o[key] = v;
        }
        item[name] = o;
      };
    }
    case 'assoc': {
      const { column } = field;
      return (row, item, _i, loaded) => {
        const id = row[column] as number | null;
        item[name] = id === null ? null : (loaded.expanded.get(name)?.get(id) ?? { id });
      };
    }
    case 'assocList':
      return (row, item, _i, loaded) => {
        item[name] = loaded.lists.get(name)?.get(row.id) ?? [];
      };
    case 'computed':
      return (_row, item, index, loaded) => {
        item[name] = loaded.computed.get(name)?.[index] ?? null;
      };
    default:
      return () => {};
  }
}

const writers = new WeakMap<Collection, Map<string, Put[]>>();
const WRITERS_LIMIT = 200;

function writersFor(c: Collection, fields: string[]): Put[] {
  let byFields = writers.get(c);
  if (!byFields) writers.set(c, (byFields = new Map()));
  const key = fieldsKey(fields);
  let puts = byFields.get(key);
  if (!puts) {
    puts = fields.map((name) => writer(c, name));
    if (byFields.size >= WRITERS_LIMIT) byFields.clear();
    byFields.set(key, puts);
  }
  return puts;
}

export async function present(
  db: Executor,
  c: Collection,
  caller: Caller,
  p: Projection,
  rows: Row[],
  /** Rows whose association lists are known (unchanged since read, or none yet): taken from these items, not read. */
  knownLists?: ReadonlyMap<number, Item>,
): Promise<Item[]> {
  const loaded: Loaded = { expanded: new Map(), lists: new Map(), computed: new Map() };
  for (const [name, members] of p.expand) {
    const field = c.fields[name];
    if (field.kind !== 'assoc') continue;
    const ids = [...new Set(rows.map((r) => r[field.column]).filter((v) => v !== null))] as number[];
    loaded.expanded.set(name, ids.length ? await loadAssoc(db, caller, field, ids, members) : new Map());
  }
  for (const name of p.fields) {
    const field = c.fields[name];
    if (field.kind === 'assocList' && rows.length) {
      const unknown = knownLists ? rows.filter((r) => !knownLists.has(r.id)) : rows;
      const lists = unknown.length
        ? await loadLists(
            db,
            field,
            caller.accountId,
            unknown.map((r) => r.id),
            // `[*]` expands a list only of a collection the caller reads (else `[{id}]`).
            p.expand.has(name) && (!field.targetCollection || passes(field.targetCollection, caller, 'read')),
          )
        : new Map<number, Record<string, unknown>[]>();
      if (knownLists && unknown.length < rows.length)
        for (const r of rows) {
          const item = knownLists.get(r.id);
          if (item) lists.set(r.id, [...((item[name] as Record<string, unknown>[] | undefined) ?? [])]);
        }
      loaded.lists.set(name, lists);
    }
    if (field.kind === 'computed' && rows.length) loaded.computed.set(name, await field.compute(db, caller, rows));
    if (field.kind === 'scalar' && field.customFields && rows.length)
      loaded.customKeys = await visibleKeys(db, caller, c.name, rows, field.column);
  }
  const puts = writersFor(c, p.fields);
  const items = new Array<Item>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const item: Item = { id: rows[i].id };
    for (const put of puts) put(rows[i], item, i, loaded);
    items[i] = item;
  }
  return items;
}
