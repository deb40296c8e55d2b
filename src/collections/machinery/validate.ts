import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { FormatRegistry, type TSchema } from '@sinclair/typebox';

// Formats the schemas name (TypeBox knows none by itself); patterns carry the exact rule.
// A real calendar day too: Date.parse rolls 2030-02-31 over to March 3rd, so the day is checked;
// and in the range every date-time is held to (fields.ts INSTANT_RANGE).
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => instantMs(v) !== undefined && realDay(v));
function realDay(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(v);
  if (!m) return true;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}
// A real calendar day: 2025-02-30 parses (and rolls over) in JS, so compare the round trip.
if (!FormatRegistry.Has('date')) {
  FormatRegistry.Set('date', (v) => {
    const ms = Date.parse(`${v}T00:00:00Z`);
    return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === v;
  });
}
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v));
import { validationError, type ApiErrorBody } from '../../errors.js';
import type { Collection, Columns, Item, Op } from './collection.js';
import { INSTANT_RANGE, MAX_ID, instantMs, isItemId, type Field } from './fields.js';
import { kindOf } from './kinds/index.js';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();
function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)));
  return c;
}

function describe(field: Field, value: unknown): string {
  const schema = field.kind === 'scalar' && value !== null ? field.valueSchema : field.schema;
  const first = checker(schema).Errors(value).First();
  if (!first) return 'invalid value';
  const where = first.path ? ` at '${first.path.slice(1).replace(/\//g, '.')}'` : '';
  // A well-formed date-time outside the range says the range, not "must match format".
  const format = (first.schema as { format?: string }).format;
  if (
    format === 'date-time' &&
    typeof first.value === 'string' &&
    Number.isFinite(Date.parse(first.value)) &&
    instantMs(first.value) === undefined
  )
    return `must be a date-time from ${INSTANT_RANGE}${where}`;
  // An enum (a union of literals) lists what it takes instead of TypeBox's "expected union value".
  const options = (first.schema as { anyOf?: { const?: unknown }[] }).anyOf;
  if (options?.length && options.every((o) => o.const !== undefined)) {
    return `must be one of ${options.map((o) => JSON.stringify(o.const)).join(', ')}${where}`;
  }
  return `${first.message.toLowerCase()}${where}`;
}

export const isPlainObject = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The schema checks every collection shares: the item is an object; no unknown or read-only
 * members; required members present on create (one error each); every value matches its schema;
 * a positive integer `id` on update and delete (where it is the only member).
 */
export function validateItem(c: Collection, item: unknown, op: Op): ApiErrorBody[] {
  if (!isPlainObject(item)) return [validationError('notAnObject', '')];
  const errors: ApiErrorBody[] = [];
  for (const key of Object.keys(item)) {
    if (key === 'id') {
      if (op === 'create') errors.push(validationError('readOnly', 'id'));
      continue;
    }
    // A delete names its item by id and nothing else.
    const field = op !== 'delete' && Object.hasOwn(c.fields, key) ? c.fields[key] : undefined;
    if (!field) errors.push(validationError('unknown', key));
    else if (field.readOnly) errors.push(validationError('readOnly', key));
    else if (field.kind === 'assoc' && !isAssocShape(item[key], !!field.nullable))
      errors.push(validationError('association', key));
    else if (
      field.kind === 'assocList' &&
      !(Array.isArray(item[key]) && (item[key] as unknown[]).every((v) => isAssocShape(v, false)))
    ) {
      errors.push(validationError('association', key));
    } else if (field.kind === 'object' && isPlainObject(item[key])) {
      for (const member of Object.keys(item[key] as Item)) {
        if (!Object.hasOwn(field.members, member)) errors.push(validationError('unknown', `${key}.${member}`));
        else {
          // A member's own problem names it (`address.location`), whatever else the object holds.
          const m = field.members[member];
          const v = (item[key] as Item)[member];
          const why = v === null || v === undefined ? undefined : kindOf(m).problem?.(m, v);
          if (why) errors.push(validationError('invalid', `${key}.${member}`, why));
        }
      }
      if (!errors.some((e) => e.field?.startsWith(`${key}.`)) && !checker(field.schema).Check(item[key])) {
        errors.push(validationError('invalid', key, describe(field, item[key])));
      }
    } else if (field.kind === 'scalar' && field.check) {
      errors.push(...field.check(item[key], key));
    } else if (field.kind === 'scalar' && kindOf(field).problem && item[key] !== null) {
      // The kind's own check first (a decimal's digits, a location's members), then the schema's
      // bounds. Money's decimals are the account currency's: its collection checks them
      // (checkCurrencyDecimals).
      const why = kindOf(field).problem!(field, item[key]);
      if (why) errors.push(validationError('invalid', key, why));
      else if (!checker(field.schema).Check(item[key]))
        errors.push(validationError('invalid', key, describe(field, item[key])));
    } else if (!checker(field.schema).Check(item[key]))
      errors.push(validationError('invalid', key, describe(field, item[key])));
  }
  if (op !== 'create') {
    if (!('id' in item)) errors.unshift(validationError('required', 'id'));
    else if (!isItemId(item.id))
      errors.unshift(validationError('invalid', 'id', `must be an integer from 1 to ${MAX_ID}`));
  }
  if (op === 'create') {
    for (const [name, field] of Object.entries(c.fields)) {
      if (field.required && item[name] === undefined) errors.push(validationError('required', name));
    }
  }
  return errors;
}

function isAssocShape(v: unknown, nullable: boolean): boolean {
  if (v === null) return nullable;
  return isPlainObject(v) && Object.keys(v).length === 1 && isItemId(v.id);
}

/** The column values an item sets; on create, defaults fill what the item left out. */
export function itemToRow(c: Collection, item: Item, op: Op, now: number): Columns {
  const row: Columns = {};
  for (const [name, field] of Object.entries(c.fields)) {
    const given = Object.hasOwn(item, name);
    const value = item[name];
    switch (field.kind) {
      case 'scalar':
        if (given) kindOf(field).write(field, value, row);
        else if (op === 'create' && field.default !== undefined) kindOf(field).write(field, field.default, row);
        break;
      case 'object':
        if (given) {
          for (const [m, s] of Object.entries(field.members)) {
            kindOf(s).write(s, value === null ? null : (value as Item)[m], row);
          }
        }
        break;
      case 'assoc':
        if (given) row[field.column] = value === null ? null : (value as { id: number }).id;
        break;
      default:
        break;
    }
  }
  if (op === 'create') row.created = now;
  row.modified = now;
  return row;
}

/** The item as echoed back in failures: write-only members (passwords) are never returned. */
export function rawData(c: Collection, item: unknown): unknown {
  if (!isPlainObject(item)) return item;
  return Object.fromEntries(
    Object.entries(item).filter(([k]) => !(Object.hasOwn(c.fields, k) && c.fields[k].kind === 'writeOnly')),
  );
}
