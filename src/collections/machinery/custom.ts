import { sql } from 'kysely';
import { dialectOf, inTransaction, type Executor } from '../../db/runner.js';
import { searchColumns, searchTextOf } from './search.js';
import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import type { Caller, Collection, FilterColumn, Row } from './collection.js';
import type { ValueType } from './fields.js';
import { fieldsIn, type CmpOp, type WhereNode } from './where.js';
import type { Batch } from './write/batch.js';
import { stopOnErrors } from './write/outcome.js';
import type { CustomState, CustomType, Definition } from './custom-definitions.js';
import {
  bumpVersion,
  definitionRows,
  freeItemValues,
  freeKey,
  freeOrphanedValues,
  itemHoldingTerm,
  itemsHolding,
  setSearchText,
  storedCustomValues,
  takeExistingValues,
  takeUniqueValues,
} from './custom-repository.js';

/** The value kind a custom field of each type is compared as (kinds/): dates and choices are text. */
const VALUE_TYPE: Record<CustomType, ValueType> = {
  text: 'string',
  number: 'number',
  boolean: 'boolean',
  date: 'string',
  select: 'string',
};

export { CUSTOM_TYPES, type CustomState, type CustomType, type Definition } from './custom-definitions.js';

/**
 * Custom fields (PRODUCT §12): one value kind of the machinery. A collection declared with
 * `customFields: true` stores its items' values in one JSON column, `custom_fields`; the account's
 * definitions (the `customFieldDefinitions` collection, table `custom_field_definitions`) type them
 * when written, hide the keys of deleted definitions when read, and type `where`/`sort` on
 * `customFields.<key>`. Unique values are kept in `custom_unique_values`, whose unique index
 * refuses a second item with the same value whichever transaction commits first.
 */
/** The collections that may have custom fields (each is the name of its table too). */
export const CUSTOM_COLLECTIONS = [
  'users',
  'clients',
  'sites',
  'contacts',
  'jobs',
  'visits',
  'quotes',
  'invoices',
  'products',
  'assets',
] as const;
export const CUSTOM_KEY = '^[a-z][A-Za-z0-9]{0,39}$';
/** The longest text value, in characters (code points). */
export const CUSTOM_TEXT_MAX = 1000;

const PREFIX = 'customFields.';

/** The account's definitions for a collection, deleted ones included (their keys stay taken), by key. */
export async function definitionsOf(
  db: Executor,
  accountId: number,
  collection: string,
): Promise<Map<string, Definition>> {
  const rows = await definitionRows(db, accountId, collection);
  return new Map(
    rows.map((r) => [
      r.key as string,
      {
        key: r.key as string,
        type: r.type as CustomType,
        options: r.options === null ? null : (JSON.parse(r.options as string) as string[]),
        required: Boolean(r.is_required),
        unique: Boolean(r.is_unique),
        complete: Boolean(r.unique_complete),
        deleted: Boolean(r.deleted),
      },
    ]),
  );
}

/**
 * The definitions as one request reads them: a list that filters on a custom field and its
 * presentation ask for them twice, and read them once (one statement less per request). Kept per
 * caller (one per request), outside transactions only: a write reads them in its transaction.
 */
const asked = new WeakMap<Caller, Map<string, Promise<Map<string, Definition>>>>();
export function definitionsFor(db: Executor, caller: Caller, collection: string): Promise<Map<string, Definition>> {
  if (inTransaction(db)) return definitionsOf(db, caller.accountId, collection);
  let mine = asked.get(caller);
  if (!mine) asked.set(caller, (mine = new Map()));
  let defs = mine.get(collection);
  if (!defs) {
    defs = definitionsOf(db, caller.accountId, collection);
    mine.set(collection, defs);
    // A failed read is not kept.
    defs.catch(() => mine.delete(collection));
  }
  return defs;
}

/** A stored `custom_fields` value as an object (JSONB comes parsed, SQLite's text does not). */
export function storedValues(v: unknown): Record<string, unknown> {
  if (typeof v === 'string') return v === '{}' || v === '' ? {} : (JSON.parse(v) as Record<string, unknown>);
  return (v ?? {}) as Record<string, unknown>;
}

const isEmpty = (v: unknown) =>
  v === null || v === undefined || v === '{}' || (typeof v === 'object' && Object.keys(v as object).length === 0);

/** The keys of live definitions, when any row has a value to show (none: no lookup at all). */
export async function visibleKeys(
  db: Executor,
  caller: Caller,
  collection: string,
  rows: Row[],
  column: string,
): Promise<Set<string> | undefined> {
  if (rows.every((r) => isEmpty(r[column]))) return undefined;
  const defs = await definitionsFor(db, caller, collection);
  return new Set([...defs.values()].filter((d) => !d.deleted).map((d) => d.key));
}

/** The values to show: those of live definitions. */
export function visibleValues(stored: unknown, keys: Set<string> | undefined): Record<string, unknown> {
  if (!keys || isEmpty(stored)) return {};
  const values = storedValues(stored);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(values)) if (keys.has(k)) out[k] = values[k];
  return out;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (v: string) => {
  const ms = Date.parse(`${v}T00:00:00Z`);
  return DATE.test(v) && Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === v;
};

/** Why a value does not fit its definition, or undefined when it does. */
function wrongValue(d: Definition, v: unknown): string | undefined {
  switch (d.type) {
    case 'text':
      if (typeof v !== 'string') return 'must be text';
      return [...v].length > CUSTOM_TEXT_MAX ? `must be at most ${CUSTOM_TEXT_MAX} characters` : undefined;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? undefined : 'must be a number';
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'must be true or false';
    case 'date':
      return typeof v === 'string' && isDay(v) ? undefined : 'must be a date, YYYY-MM-DD';
    case 'select':
      return typeof v === 'string' && d.options?.includes(v)
        ? undefined
        : `must be one of ${(d.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`;
    default:
      return 'has an unknown type';
  }
}

/** Keys sorted, so the same values are stored (and compared, in events) as the same text. */
const sorted = (o: Record<string, unknown>) =>
  Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]),
  );

/** What the custom-fields step found for a batch: the definitions and each item's values after the write. */

/**
 * In the transaction, after the stored rows were loaded: each item's custom fields checked against
 * the account's definitions and merged with the stored ones (the keys sent set, null removes), and
 * the searched text made again when what it is made of changes.
 */
export async function checkCustomFields(b: Batch, db: Executor): Promise<void> {
  const { collection: c, caller, op } = b.request;
  const field = c.fields.customFields;
  const custom = c.customFields && field?.kind === 'scalar';
  if (op === 'delete' || (!custom && !c.search)) return;
  const needed = custom && (op === 'create' || b.items.some((it) => it.customFields !== undefined));
  const defs =
    needed || (c.search && custom) ? await definitionsOf(db, caller.accountId, c.name) : new Map<string, Definition>();
  const state: CustomState = { defs, values: [], texts: [] };
  b.custom = state;
  const searched = c.search ? searchColumns(c) : [];
  b.items.forEach((item, i) => {
    if (b.errors[i].length) return;
    const existing = b.existing[i];
    let values: Record<string, unknown> | undefined;
    if (custom && (op === 'create' || item.customFields !== undefined)) {
      const errors: ApiErrorBody[] = [];
      const sent = (item.customFields ?? {}) as Record<string, unknown>;
      values = existing ? { ...storedValues(existing.custom_fields) } : {};
      for (const [key, v] of Object.entries(sent)) {
        const d = defs.get(key);
        const name = `${PREFIX}${key}`;
        if (!d || d.deleted) errors.push(validationError('unknown', name));
        else if (v === null) {
          if (d.required) errors.push(validationError('required', name));
          delete values[key];
        } else {
          const why = wrongValue(d, v);
          if (why) errors.push(validationError('invalid', name, why));
          else values[key] = v;
        }
      }
      if (op === 'create') {
        for (const d of defs.values()) {
          if (d.required && !d.deleted && values[d.key] === undefined && sent[d.key] !== null)
            errors.push(validationError('required', `${PREFIX}${d.key}`));
        }
      }
      b.errors[i].push(...errors);
      if (errors.length) return;
      values = sorted(values);
      b.rows[i].custom_fields = dialectOf(db).toJson(values);
      state.values[i] = values;
    }
    if (searched.length && (op === 'create' || values || searched.some((col) => col in b.rows[i]))) {
      const all = values ?? (existing ? storedValues(existing.custom_fields) : {});
      state.texts[i] = Object.entries(all).flatMap(([k, v]) => {
        const d = defs.get(k);
        return d && !d.deleted && d.type === 'text' && typeof v === 'string' ? [v] : [];
      });
    }
  });
}

/** A value as the unique index keeps it: its JSON text (so 1 and "1" differ, and case counts). */
const uniqueText = (v: unknown) => JSON.stringify(v);

/**
 * In the transaction, once the rows are written: the unique custom values each item now has, in
 * `custom_unique_values`. A value another item holds (committed, or in a transaction that commits
 * first) is refused by the index: a failure of this item naming `customFields.<key>`. The batch's
 * values go in by one statement that skips the values the index refuses and returns those it took,
 * so a refused value names its item without running the batch again.
 */
export async function saveUniqueValues(b: Batch, db: Executor): Promise<void> {
  const { collection: c, caller, op } = b.request;
  if (!c.customFields) return;
  const account = caller.accountId;
  if (op === 'delete') return freeItemValues(db, account, c.name, b.written);
  const state = b.custom;
  if (!state) return;
  const unique = [...state.defs.values()].filter((d) => d.unique && !d.deleted);
  if (!unique.length) return;
  const errors: ApiErrorBody[][] = b.items.map(() => []);
  const rows: { i: number; key: string; value: string; item_id: number }[] = [];
  for (const d of unique) {
    const seen = new Set<string>();
    const changed: number[] = [];
    for (let i = 0; i < b.items.length; i++) {
      const id = b.written[i];
      const v = state.values[i];
      // A PATCH changes the keys it sends; a create sets every key it has.
      if (!v || id === undefined || (op === 'update' && !(d.key in (b.items[i].customFields as object)))) continue;
      changed.push(id);
      if (v[d.key] === undefined) continue;
      const value = uniqueText(v[d.key]);
      if (seen.has(value)) errors[i].push(validationError('unique', `${PREFIX}${d.key}`));
      seen.add(value);
      rows.push({ i, key: d.key, value, item_id: id });
    }
    if (op === 'update') await freeItemValues(db, account, c.name, changed, d.key);
  }
  stopOnErrors(errors);
  if (!rows.length) return;
  // The values go in by one statement; a value another item holds is not inserted (the index waits
  // for a concurrent holder's transaction, then refuses it), and the statement says which went in.
  const insert = async (some: typeof rows) => {
    const taken = await takeUniqueValues(
      db,
      some.map(({ key, value, item_id }) => ({ account_id: account, collection: c.name, key, value, item_id })),
    );
    const went = new Set(taken.map((r) => `${r.key as string}\u0000${r.value as string}`));
    return some.filter((r) => !went.has(`${r.key}\u0000${r.value}`));
  };
  let refused = await insert(rows);
  if (!refused.length) return;
  // A value left by an item deleted with another (a cascade) is free again: those go, then the
  // refused values are tried once more; a value still held names its item's field.
  for (const key of new Set(refused.map((r) => r.key)))
    await freeOrphanedValues(
      db,
      c,
      account,
      key,
      refused.filter((r) => r.key === key).map((r) => r.value),
    );
  refused = await insert(refused);
  for (const r of refused) errors[r.i].push(validationError('unique', `${PREFIX}${r.key}`));
  stopOnErrors(errors);
}

/**
 * A definition's unique rule changed: turned on, the values items hold already are taken (the
 * first item of a value keeps it; existing items never fail); turned off, they are free. Either way
 * (and on any change of a definition) the collection's remembered answers are forgotten: the table's
 * change version moves (values may show or hide).
 */
export async function definitionChanged(
  db: Executor,
  accountId: number,
  collection: string,
  key: string,
  unique: { before: boolean; after: boolean },
): Promise<void> {
  const table = collection;
  if (unique.after && !unique.before) {
    const rows = await storedCustomValues(db, table, accountId);
    const taken = rows.flatMap((r) => {
      const v = storedValues(r.custom_fields)[key];
      return v === undefined ? [] : [{ account_id: accountId, collection, key, value: uniqueText(v), item_id: r.id }];
    });
    // Two items shared a value: only the first is kept, so filters cannot read the index alone.
    await takeExistingValues(db, accountId, collection, key, taken);
  } else if (unique.before && !unique.after) await freeKey(db, accountId, collection, key);
  await bumpVersion(db, accountId, table);
}

/** Rows a definition's search text is made again for, per statement (the pages of `refreshSearchText`). */
export const SEARCH_REFRESH_PAGE = 500;

/**
 * A text definition was deleted logically, or restored (PRODUCT §12: a deleted definition's
 * values are no longer matched by `q`): the searched text of the collection's items that hold a
 * value for its key is made again, in the transaction that changes the definition, from their
 * searched columns and the text values of the definitions live now. Only those items are read (a
 * JSON condition on the key), a page of SEARCH_REFRESH_PAGE rows at a time in id order, and only
 * the rows whose text changes are written (SQLite's FTS5 table follows by its trigger, PostgreSQL's
 * tsvector is generated). Returns how many rows were written.
 */
export async function refreshSearchText(db: Executor, c: Collection, accountId: number, key: string): Promise<number> {
  if (!c.search || !c.customFields) return 0;
  const defs = await definitionsOf(db, accountId, c.name);
  const liveText = (k: string) => {
    const d = defs.get(k);
    return !!d && !d.deleted && d.type === 'text';
  };
  const columns = [...new Set(searchColumns(c))];
  let written = 0;
  for (let after = 0; ;) {
    const rows = await itemsHolding(db, c, accountId, key, columns, after, SEARCH_REFRESH_PAGE);
    for (const r of rows) {
      const values = storedValues(r.custom_fields);
      const texts = Object.entries(values).flatMap(([k, v]) => (liveText(k) && typeof v === 'string' ? [v] : []));
      const text = searchTextOf(c, r, texts);
      if (text === r.search_text) continue;
      await setSearchText(db, c.table, accountId, r.id as number, text);
      written++;
    }
    if (rows.length < SEARCH_REFRESH_PAGE) return written;
    after = rows[rows.length - 1].id as number;
  }
}

const OPS: Record<CustomType, readonly CmpOp[]> = {
  text: ['~', '!~', '=', '!='],
  number: ['=', '!=', '<', '<=', '>', '>='],
  date: ['=', '!=', '<', '<=', '>', '>='],
  boolean: ['=', '!='],
  select: ['=', '!='],
};

export const isCustomName = (name: string): boolean => name.startsWith(PREFIX);

/**
 * The filter columns of the `customFields.<key>` a list's `where` and `sort` name, typed by the
 * account's live definitions; an unknown or deleted key is a 400.
 */
export async function customColumns(
  db: Executor,
  c: Collection,
  caller: Caller,
  where: WhereNode | undefined,
  sort: string[],
): Promise<Map<string, FilterColumn> | undefined> {
  const names = new Set(fieldsIn(where).filter(isCustomName));
  const sorted = sort.filter(isCustomName);
  if (!names.size && !sorted.length) return undefined;
  const defs = c.customFields ? await definitionsFor(db, caller, c.name) : new Map<string, Definition>();
  const accountId = caller.accountId;
  const dialect = dialectOf(db);
  const column = sql.ref(`${c.table}.custom_fields`);
  const out = new Map<string, FilterColumn>();
  const add = (name: string, modifier: string) => {
    const d = defs.get(name.slice(PREFIX.length));
    if (!d || d.deleted) throw new ApiError('badModifier', `${modifier}: unknown field '${name}'`);
    out.set(name, {
      column: 'custom_fields',
      type: VALUE_TYPE[d.type],
      nullable: true,
      expr: dialect.jsonMember(column, d.key, d.type),
      ops: OPS[d.type],
      // `=` by an index. A unique key (an integrator's own id) whose index holds every value
      // names at most one item: a scalar subquery gives its id, and the account is said as an
      // equality too, so PostgreSQL seeks (account_id, id) (0.2 ms) instead of walking the
      // account's range that lists use (dialect accountCondition; 7 ms). `where` has no negation,
      // so a value no item holds (`id = null`) keeps no row, as `in` an empty set would. Other
      // keys: PostgreSQL's GIN index of the column, or a scan.
      equals: (v) =>
        d.unique && d.complete
          ? itemHoldingTerm(c, accountId, d.key, uniqueText(v))
          : dialect.jsonHas(column, d.key, v),
    });
  };
  for (const n of names) add(n, 'where');
  for (const n of sorted) if (!out.has(n)) add(n, 'sort');
  return out;
}
