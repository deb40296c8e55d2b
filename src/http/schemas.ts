import type { Collection } from '../collections/machinery/collection.js';
import type { Field } from '../collections/machinery/fields.js';
import { ERRORS, VALIDATION } from '../errors.js';

/**
 * The JSON Schemas of answers, from the collection declarations and each field's TypeBox schema:
 * the OpenAPI document (openapi/document.ts) publishes them and the compiled serializers (serialize.ts)
 * write answers by them, so what is documented and what is sent come from one place.
 */
export type Json = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** TypeBox schemas carry symbol keys; a JSON round trip leaves the plain JSON Schema. */
export const plain = (schema: unknown): Json => JSON.parse(JSON.stringify(schema));
const nullable = (s: Json): Json => ({ anyOf: [s, { type: 'null' }] });

/** What a field looks like in responses: associations with their `[*]` members. */
export function readSchema(field: Field): Json {
  const doc = field.description ? { description: field.description } : {};
  switch (field.kind) {
    case 'assoc': {
      // The members are the target's own declarations: the same schema its own items are served with.
      const members = Object.fromEntries(
        Object.entries(field.members).map(([m, d]) => [m, { ...plain(d.schema), description: 'with fields=[*]' }]),
      );
      const obj = { type: 'object', properties: { id: { type: 'integer' }, ...members }, required: ['id'] };
      return { ...(field.nullable ? nullable(obj) : obj), ...doc };
    }
    case 'assocList': {
      const members = Object.fromEntries(Object.entries(field.members).map(([m, d]) => [m, plain(d.schema)]));
      return {
        type: 'array',
        items: { type: 'object', properties: { id: { type: 'integer' }, ...members }, required: ['id'] },
        ...doc,
      };
    }
    case 'object':
      // Stored members that are null are left out of the object, so none is required in responses.
      return { ...plain(field.schema), required: undefined, ...doc };
    default:
      return { ...plain(field.schema), ...(field.readOnly ? { readOnly: true } : {}), ...doc };
  }
}

/** An item as responses show it; the answers' compiled serializers derive from it too (serialize.ts). */
export function itemSchema(c: Collection): Json & { properties: Record<string, Json> } {
  // A write-only field the server sets itself (a webhook's `secret`) is in the answers that reveal it.
  const readable = Object.entries(c.fields).filter(([, f]) => f.kind !== 'writeOnly' || f.readOnly);
  const defaults = c.defaultFields.join(', ');
  return {
    type: 'object',
    description: `${c.description} Without \`fields\` an item has: id, ${defaults}. \`fields=*\` adds the rest; \`[*]\` expands associations.`,
    properties: {
      id: { type: 'integer', readOnly: true },
      ...Object.fromEntries(readable.map(([n, f]) => [n, readSchema(f)])),
    },
    required: ['id'],
  };
}

/**
 * An item as answered without `fields`, and by a create, an update or an action: `id` and every
 * default field, each present (null when empty). `fields` answers the fields it names instead.
 */
export function defaultItemSchema(c: Collection): Json {
  return {
    description: `${pascal(c.name)} as answered without \`fields\` (and by writes): every default field is present.`,
    allOf: [ref(pascal(c.name))],
    required: ['id', ...c.defaultFields],
  };
}

/**
 * One collection's event as `/events` answers it without `fields`, and as a webhook delivery's
 * `data`: its `type` and `collection` are that collection's, and its `data` has the collection's
 * default fields except the computed ones (events leave them out: a signed URL is a credential).
 */
export function eventSchema(c: Collection, events: Collection): Json {
  return {
    description: `An event of ${c.name}.`,
    type: 'object',
    properties: {
      ...itemSchema(events).properties,
      type: { type: 'string', enum: ['created', 'updated', 'deleted'].map((t) => `${c.name}.${t}`) },
      collection: { type: 'string', const: c.name },
      data: {
        allOf: [ref(pascal(c.name))],
        required: ['id', ...c.defaultFields.filter((n) => c.fields[n].kind !== 'computed')],
      },
    },
    required: ['id', ...events.defaultFields],
  };
}

export function envelope(name: string, item: string, metadata: string): Json {
  return {
    type: 'object',
    properties: { result: { const: 'success' }, [name]: { type: 'array', items: ref(item) }, metadata: ref(metadata) },
    required: ['result', name, 'metadata'],
  };
}

const errorCodes = Object.values(ERRORS).map((e) => e.code);
const validationCodes = Object.values(VALIDATION).map((v) => v.code);

export const SHARED_SCHEMAS: Record<string, Json> = {
  Error: {
    type: 'object',
    properties: {
      type: { enum: ['validation', 'content', 'client', 'server'] },
      code: { type: 'integer', enum: [...errorCodes, ...validationCodes].sort() },
      message: { type: 'string' },
      field: { type: 'string', description: 'Only on validation errors: the offending member' },
    },
    required: ['type', 'code', 'message'],
  },
  ErrorEnvelope: {
    type: 'object',
    properties: { result: { const: 'error' }, error: ref('Error') },
    required: ['result', 'error'],
  },
  FailureEnvelope: {
    type: 'object',
    description: 'Validation failed for one or more items; nothing of the request was saved.',
    properties: {
      result: { const: 'failure' },
      failures: {
        type: 'array',
        items: {
          type: 'object',
          properties: { rawData: {}, errors: { type: 'array', items: ref('Error') } },
          required: ['rawData', 'errors'],
        },
      },
      metadata: ref('WriteMetadata'),
    },
    required: ['result', 'failures', 'metadata'],
  },
  ListMetadata: {
    type: 'object',
    properties: {
      page: { type: 'integer' },
      pagesCount: { type: 'integer' },
      recordsPerPage: { type: 'integer' },
      recordsCount: { type: 'integer' },
    },
    required: ['page', 'pagesCount', 'recordsPerPage', 'recordsCount'],
  },
  WriteMetadata: {
    type: 'object',
    properties: {
      receivedItemsCount: { type: 'integer' },
      validItems: { type: 'array', items: { type: 'integer' } },
      invalidItems: { type: 'array', items: { type: 'integer' } },
    },
    required: ['receivedItemsCount', 'validItems', 'invalidItems'],
  },
};
