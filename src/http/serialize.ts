import fastJson from 'fast-json-stringify';
import type { Collection, Item } from '../collections/machinery/collection.js';
import { kindOf } from '../collections/machinery/kinds/index.js';
import { fieldsKey } from '../collections/machinery/present.js';
import type { ApiErrorBody } from '../errors.js';
import { envelope, itemSchema, pascal, SHARED_SCHEMAS, type Json } from './schemas.js';

/**
 * Answers written by serializers compiled from the response schemas (schemas.ts: the ones the
 * OpenAPI document publishes) with fast-json-stringify, once per collection and projection.
 *
 * What they write is byte for byte what `JSON.stringify` writes for the same answer, and the schemas
 * are reduced to what guarantees it:
 * - only types are kept (no `format`: fast-json-stringify writes a date-time string unescaped);
 *   `integer` becomes `number` (both write `'' + n`, as JSON.stringify does; an `integer` would round);
 * - every value may be null, and with more than one type fast-json-stringify checks the value's
 *   type strictly and throws on a mismatch, where one type would coerce (null to "", 0, false);
 *   a throw sends the answer through `JSON.stringify` instead;
 * - values the declarations do not type (`json` columns, computed values, unions of types) are
 *   left to `JSON.stringify` inside the compiled code (an empty schema);
 * - properties come out in schema order and undeclared ones are left out: a projection's schema
 *   lists `id` and its fields in the order `present` writes them, and `present` writes no other.
 * Strings are escaped as JSON.stringify does (control characters, `"`, `\`, lone surrogates as
 * `\uXXXX`). serialize.test.ts compares both on every collection's example and edge values.
 */
type Serializer = (value: unknown) => string;

/** A response schema as fast-json-stringify takes it (see above); `{}` hands the value to JSON.stringify. */
function typesOf(s: Json, refs: (name: string) => Json): Json {
  if (typeof s.$ref === 'string') return typesOf(refs(s.$ref.slice(s.$ref.lastIndexOf('/') + 1)), refs);
  const union = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (union) {
    const parts = union.map((p) => typesOf(p, refs)).filter((p) => p.type !== 'null');
    const distinct = new Set(parts.map((p) => JSON.stringify(p)));
    return distinct.size === 1 ? parts[0] : {};
  }
  const literals = s.const !== undefined ? [s.const] : (s.enum as unknown[] | undefined);
  const type = literals ? [...new Set(literals.map((v) => typeof v))].join() : s.type;
  switch (type) {
    case 'string':
    case 'boolean':
      return { type: [type, 'null'] };
    case 'integer':
    case 'number':
      return { type: ['number', 'null'] };
    case 'object': {
      if (!s.properties) return {};
      const props = Object.entries(s.properties as Record<string, Json>).map(([k, v]) => [k, typesOf(v, refs)]);
      return { type: ['object', 'null'], properties: Object.fromEntries(props) };
    }
    case 'array':
      return s.items && !Array.isArray(s.items)
        ? { type: ['array', 'null'], items: typesOf(s.items as Json, refs) }
        : {};
    default:
      return {};
  }
}

const shared = (name: string) => SHARED_SCHEMAS[name];

/** How many answers went to JSON.stringify because the compiled code refused a value (the tests read it). */
export const fallbacks = { count: 0 };

/** Compiled; a value it cannot write exactly as JSON.stringify does (it throws) goes to JSON.stringify. */
function compile(schema: Json): Serializer {
  const write = fastJson(schema) as Serializer;
  return (value) => {
    try {
      return write(value);
    } catch {
      fallbacks.count++;
      return JSON.stringify(value);
    }
  };
}

/** An item of a projection: `id`, then the fields in the order `present` writes them. */
function projected(c: Collection, fields: string[]): Json {
  const item = itemSchema(c);
  // Values the declarations do not type are stored JSON or derived: JSON.stringify writes them.
  const typed = (name: string) => {
    const f = c.fields[name];
    return (f.kind === 'scalar' && kindOf(f).untyped) || f.kind === 'computed' ? {} : item.properties[name];
  };
  return {
    type: 'object',
    properties: Object.fromEntries([['id', item.properties.id], ...fields.map((n) => [n, typed(n)])]),
  };
}

function listSerializer(c: Collection, fields: string[]): Serializer {
  const item = projected(c, fields);
  const N = pascal(c.name);
  return compile(typesOf(envelope(c.name, N, 'ListMetadata'), (name) => (name === N ? item : shared(name))));
}

/**
 * Per collection, the projections' serializers. Compiling one takes milliseconds (a new function
 * for V8 to parse and optimise), so a projection is compiled on its second answer, and at most
 * COMPILED_LIMIT per collection: a client sending a new `fields` on every request then costs
 * JSON.stringify, never a compilation per request. Entries are never dropped: the work of
 * compiling and the memory it takes are bounded for the life of the process.
 */
interface Compiled {
  serializers: Map<string, Serializer>;
  seen: Set<string>;
}
const compiled = new WeakMap<Collection, Compiled>();
const COMPILED_LIMIT = 50;
const SEEN_LIMIT = 1000;

function serializerFor(c: Collection, fields: string[]): Serializer | undefined {
  let of = compiled.get(c);
  if (!of) compiled.set(c, (of = { serializers: new Map(), seen: new Set() }));
  const key = fieldsKey(fields);
  const known = of.serializers.get(key);
  if (known || of.serializers.size >= COMPILED_LIMIT) return known;
  if (!of.seen.has(key)) {
    if (of.seen.size >= SEEN_LIMIT) of.seen.clear();
    of.seen.add(key);
    return undefined;
  }
  const write = listSerializer(c, fields);
  of.serializers.set(key, write);
  return write;
}

/** How many projections of a collection have a compiled serializer (the tests read it). */
export const compiledCount = (c: Collection, fields?: string[]): number =>
  fields
    ? Number(compiled.get(c)?.serializers.has(fieldsKey(fields)) ?? false)
    : (compiled.get(c)?.serializers.size ?? 0);

/** `{result, <collection>: items, metadata}` of a read (a list, or one item), as text. */
export function listAnswer(
  c: Collection,
  fields: string[],
  body: { result: 'success'; metadata: Record<string, number> } & Record<string, Item[] | unknown>,
): string {
  const write = serializerFor(c, fields);
  return write ? write(body) : JSON.stringify(body);
}

let errorWriter: Serializer | undefined;

/** `{result: 'error', error}`, as text. */
export function errorAnswer(error: ApiErrorBody): string {
  errorWriter ??= compile(typesOf(SHARED_SCHEMAS.ErrorEnvelope, shared));
  return errorWriter({ result: 'error', error });
}
