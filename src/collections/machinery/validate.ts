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
import { INSTANT_RANGE, MAX_ID, instantMs, isItemId, locationProblem, type Field, type ScalarField } from './fields.js';
import { moneyProblem, scaledProblem, toScaled, toScaledNearest } from './money.js';

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
        else if (field.members[member].type === 'location') {
          // A location's failures name it (`address.location`), whatever else the object holds.
          const why = locationProblem((item[key] as Item)[member]);
          if (why) errors.push(validationError('invalid', `${key}.${member}`, why));
        }
      }
      if (!errors.some((e) => e.field?.startsWith(`${key}.`)) && !checker(field.schema).Check(item[key])) {
        errors.push(validationError('invalid', key, describe(field, item[key])));
      }
    } else if (field.kind === 'scalar' && field.check) {
      errors.push(...field.check(item[key], key));
    } else if (field.kind === 'scalar' && field.scale !== undefined && item[key] !== null) {
      // Exact decimals: the number's own digits, before the schema's bounds (money.ts). Money's
      // decimals are the account currency's: its collection checks them (checkCurrencyDecimals).
      const why = field.money ? moneyProblem(item[key]) : scaledProblem(item[key], field.scale);
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

function toColumn(s: ScalarField, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (s.type === 'time') return Date.parse(v as string); // writable instants are stored as epoch ms
  if (s.type === 'json') return JSON.stringify(v);
  // Money with more decimals than kept fails its currency check before anything is written.
  if (s.scale !== undefined) return s.money ? toScaledNearest(v as number, s.scale) : toScaled(v as number, s.scale);
  return s.type === 'boolean' ? (v ? 1 : 0) : v;
}

/** The column values an item sets; on create, defaults fill what the item left out. */
export function itemToRow(c: Collection, item: Item, op: Op, now: number): Columns {
  const row: Columns = {};
  for (const [name, field] of Object.entries(c.fields)) {
    const given = Object.hasOwn(item, name);
    const value = item[name];
    switch (field.kind) {
      case 'scalar':
        if (given) row[field.column] = toColumn(field, value);
        else if (op === 'create' && field.default !== undefined) row[field.column] = toColumn(field, field.default);
        break;
      case 'object':
        if (given) {
          for (const [m, s] of Object.entries(field.members)) {
            const v = value === null ? null : (value as Item)[m];
            if (s.type === 'location') {
              const point = (v ?? null) as { lat: number; lng: number } | null;
              row[s.column] = point === null ? null : point.lat;
              row[s.lngColumn!] = point === null ? null : point.lng;
            } else row[s.column] = toColumn(s, v);
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
