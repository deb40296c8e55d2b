import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { untyped } from '../../db/runner.js';
import { defineCollection, type Item, type TxItemContext } from '../machinery/collection.js';
import { CUSTOM_COLLECTIONS, definitionChanged, refreshSearchText } from '../machinery/custom.js';
import type { Registry } from '../machinery/registry.js';
import { definitionFields } from './schema.js';

/** What is fixed once created, and whether `options` suits the type (a select's, and only a select's). */
async function check({
  caller,
  db,
  op,
  item,
  index,
  existing,
  once,
}: TxItemContext<'custom_field_definitions'>): Promise<ApiErrorBody[]> {
  if (op === 'delete') return [];
  const errors: ApiErrorBody[] = [];
  if (op === 'create') {
    // Two items of the batch with one key: the second fails naming `key` (not the index's refusal).
    const keys = await once('definition keys', async () => new Map<string, number>());
    const mine = `${String(item.collection)}\u0000${String(item.key)}`;
    const first = keys.get(mine) ?? index;
    keys.set(mine, first);
    if (first !== index) return [validationError('duplicate', 'key')];
    // A key stays taken by a deleted definition (restoring it brings its values back).
    const taken = await untyped(db)
      .selectFrom('custom_field_definitions')
      .select('id')
      .where('account_id', '=', caller.accountId)
      .where('collection', '=', item.collection as string)
      .where('key', '=', item.key as string)
      .executeTakeFirst();
    if (taken) errors.push(validationError('unique', 'key'));
  }
  if (existing) {
    for (const [name, column] of [
      ['collection', 'collection'],
      ['key', 'key'],
      ['type', 'type'],
    ] as const) {
      if (item[name] !== undefined && item[name] !== existing[column])
        errors.push(validationError('conflict', name, 'it is fixed once the field is created'));
    }
  }
  if (existing) errors.push(...optionsErrors(item, existing));
  return errors;
}

/** `options`: a select's, required there, and for a select only. */
function optionsErrors(item: Item, existing?: { type: string; options: string | null }): ApiErrorBody[] {
  const type = (item.type ?? existing?.type) as string;
  const options = item.options !== undefined ? item.options : (existing?.options ?? null);
  if (type === 'select' && options === null) return [validationError('required', 'options')];
  if (type !== 'select' && item.options !== undefined && item.options !== null)
    return [validationError('invalid', 'options', 'only a select has options')];
  return [];
}

let examples = 0;

/**
 * The definitions reach the collections they define fields of through the registry they are part
 * of (a text field deleted or restored makes those items' searched text again), read when a write
 * runs: the registry lists this collection too.
 */
export const customFieldDefinitionsCollection = (registry: () => Registry) =>
  defineCollection({
    name: 'customFieldDefinitions',
    table: 'custom_field_definitions',
    description: `The account's own fields of ${CUSTOM_COLLECTIONS.slice(0, -1).join(', ')} and ${CUSTOM_COLLECTIONS.at(-1)}: their items carry the values in \`customFields\`.`,
    fields: definitionFields,
    // Imported items' values are not in custom_unique_values: a unique field is marked incomplete
    // (migration 092), so nothing relies on that table holding them.
    transfer: {
      onImport: (row) => {
        row.unique_complete = 0;
        return undefined;
      },
    },
    textField: 'label',
    // Each example a key of its own: a key is unique per collection in the account.
    example: () => ({ collection: 'jobs', key: `gasSafeNumber${++examples}`, label: 'Gas Safe number', type: 'text' }),
    policy: {
      read: { administrator: 'all', employee: 'all', contractor: 'all' },
      write: { administrator: 'all', employee: 'none', contractor: 'none' },
    },
    rules: {
      authorize({ op, item }) {
        // The values stay in their items: a key is never freed for another type. (A PATCH of
        // `deleted` is asked as a delete too: that one is allowed.)
        if (op === 'delete' && item.deleted === undefined)
          throw new ApiError('roleForbids', 'custom field definitions are deleted logically: PATCH deleted true');
      },
      validate: ({ op, item }) => (op === 'create' ? optionsErrors(item) : []),
      check,
      async fill({ caller, op, row }) {
        if (op === 'create') row.client_id = caller.clientId || null;
      },
      async after({ db, caller, op, row, existing }) {
        if (op === 'delete' && !existing) return;
        const before = Boolean(existing?.is_unique);
        const after = op === 'delete' ? false : row.is_unique === undefined ? before : Boolean(row.is_unique);
        const collection = (row.collection ?? existing?.collection) as string;
        const key = (row.key ?? existing?.key) as string;
        await definitionChanged(db, caller.accountId, collection, key, { before, after });
        // A text field deleted or restored: its values leave (or join) the items' searched text.
        const type = (row.type ?? existing?.type) as string;
        if (
          op === 'update' &&
          type === 'text' &&
          row.deleted !== undefined &&
          Boolean(row.deleted) !== Boolean(existing?.deleted)
        ) {
          const c = registry().get(collection);
          if (c) await refreshSearchText(db, c, caller.accountId, key);
        }
      },
    },
  });
