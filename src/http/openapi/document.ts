import { locationColumns } from '../../collections/machinery/near.js';
import { nounsOf, type Collection } from '../../collections/machinery/collection.js';
import { MAX_ID } from '../../collections/machinery/fields.js';
import { CMP_OPS } from '../../collections/machinery/where.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE, MAX_PAGE_SIZE } from '../../collections/machinery/modifiers.js';
import { MAX_ITEMS } from '../../collections/machinery/write/index.js';
import { API_VERSION } from '../envelope.js';
import { ERRORS, VALIDATION } from '../../errors.js';
import {
  defaultItemSchema,
  envelope,
  eventSchema,
  itemSchema,
  pascal,
  plain,
  ref,
  SHARED_SCHEMAS,
  type Json,
} from '../schemas.js';
import { oauthPaths, OAUTH_SCHEMAS } from './oauth.js';
import { operationsPaths } from './operations.js';
import { RETRY_HEADERS, RETRY_PARAMETERS, withRetries } from './retries.js';
import { STREAM_PARAMETERS, withEventStream } from './stream.js';

/**
 * The OpenAPI 3.1 document, generated from the collection registry and each field's TypeBox
 * schema (plain JSON Schema 2020-12, which OpenAPI 3.1 uses as is): nothing is written twice.
 */
function schemasFor(c: Collection): Record<string, Json> {
  const N = pascal(c.name);
  const entries = Object.entries(c.fields);
  const writable = entries.filter(([, f]) => !f.readOnly);
  const writeProps = Object.fromEntries(
    writable.map(([n, f]) => [
      n,
      {
        ...plain(f.schema),
        ...(f.kind === 'writeOnly' ? { writeOnly: true } : {}),
        ...(f.description ? { description: f.description } : {}),
      },
    ]),
  );
  return {
    [N]: itemSchema(c),
    [`${N}Create`]: {
      type: 'object',
      properties: writeProps,
      required: writable.filter(([, f]) => f.required).map(([n]) => n),
      additionalProperties: false,
    },
    [`${N}Update`]: {
      type: 'object',
      properties: { id: { type: 'integer', minimum: 1, maximum: MAX_ID }, ...writeProps },
      required: ['id'],
      additionalProperties: false,
    },
    [`${N}Default`]: defaultItemSchema(c),
    [`${N}List`]: envelope(c.name, N, 'ListMetadata'),
    [`${N}Write`]: envelope(c.name, `${N}Default`, 'WriteMetadata'),
    // A deletion answers each item's id alone.
    [`${N}Deleted`]: envelope(c.name, `${N}Delete`, 'WriteMetadata'),
  };
}

const header = (description: string, required = true) => ({ description, required, schema: { type: 'string' } });
/** The headers an error status always carries (PRODUCT §3). */
export const ERROR_HEADERS: Record<number, Record<string, Json>> = {
  401: { 'WWW-Authenticate': header('`Bearer realm="api"`, with `error="invalid_token"` when a token was sent') },
  405: { Allow: header('The methods this URL takes') },
  429: { 'Retry-After': header('Seconds until a request is counted again') },
  503: { 'Retry-After': header('Seconds to wait before retrying') },
};

/** One shared response per HTTP status, listing every code that status can carry. */
function errorResponses(): Record<string, Json> {
  const byStatus = new Map<number, string[]>();
  for (const [name, e] of Object.entries(ERRORS)) {
    if (!byStatus.has(e.status)) byStatus.set(e.status, []);
    byStatus.get(e.status)!.push(`- \`${e.code}\` (${name}): ${e.message}`);
  }
  const out: Record<string, Json> = {};
  for (const [status, lines] of byStatus) {
    const schema = status === 422 ? { oneOf: [ref('FailureEnvelope'), ref('ErrorEnvelope')] } : ref('ErrorEnvelope');
    const validation =
      status === 422
        ? `\n\nThe failure envelope's errors carry validation codes:\n${Object.entries(VALIDATION)
            .map(([n, v]) => `- \`${v.code}\` (${n})`)
            .join('\n')}`
        : '';
    const headers = ERROR_HEADERS[status];
    out[`E${status}`] = {
      description: `Error codes:\n${lines.join('\n')}${validation}`,
      ...(headers ? { headers } : {}),
      content: { 'application/json': { schema } },
    };
  }
  return out;
}

/** A summary's answer (PRODUCT §19): each group's keys under `group`, each aggregate under its own name (`sum(total)`). */
const SUMMARY_SCHEMA: Json = {
  type: 'object',
  properties: {
    result: { type: 'string', enum: ['success'] },
    summary: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          group: {
            type: 'object',
            description: 'The group keys by name: a value, `{id}` for an association, a period as text, or null.',
            additionalProperties: {
              anyOf: [
                { type: 'string' },
                { type: 'number' },
                { type: 'boolean' },
                { type: 'null' },
                {
                  type: 'object',
                  properties: { id: { type: 'integer' } },
                  required: ['id'],
                  additionalProperties: false,
                },
              ],
            },
          },
        },
        required: ['group'],
        additionalProperties: { anyOf: [{ type: 'number' }, { type: 'string' }, { type: 'null' }] },
      },
    },
    metadata: ref('ListMetadata'),
  },
  required: ['result', 'summary', 'metadata'],
  additionalProperties: false,
};

const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const PARAMETERS: Record<string, Json> = {
  XVersion: {
    name: 'X-Version',
    in: 'header',
    required: true,
    schema: { type: 'string', enum: [API_VERSION] },
    description: 'API version; required on every request',
  },
  XMethod: {
    name: 'X-Method',
    in: 'header',
    required: false,
    schema: { type: 'string', enum: ['GET', 'POST', 'PATCH', 'DELETE'] },
    description:
      'Replaces POST (spec §4.2): POST with `X-Method: PATCH` or `X-Method: DELETE` for clients that cannot send those methods. ' +
      'Any method may ask for `GET` (a PATCH with `X-Method: GET` is handled as GET). Another override of a method other than POST is 400 (1005).',
  },
  id: {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'integer', minimum: 1, maximum: MAX_ID },
    description: 'Item id; one no item can have (0, past the maximum) is 404',
  },
  fields: {
    name: 'fields',
    in: 'query',
    schema: { type: 'string' },
    description: 'Comma-separated field names; `*` = all fields, `[*]` = associations in full; `id` is always returned',
  },
  where: {
    name: 'where',
    in: 'query',
    schema: { type: 'string' },
    description: `Filter: \`term (and|or term)*\` with parentheses; \`field op value\`, op one of \`${CMP_OPS.join(' ')}\`; values quoted strings, numbers, true, false, null; e.g. \`lastName ~ 'smi' and role.id = 2\``,
  },
  sort: {
    name: 'sort',
    in: 'query',
    schema: { type: 'string' },
    description: 'Comma-separated fields, `-` for descending (default `id`)',
  },
  near: {
    name: 'near',
    in: 'query',
    schema: { type: 'string', pattern: '^-?\\d+(\\.\\d+)?,-?\\d+(\\.\\d+)?(,\\d+(\\.\\d+)?)?$' },
    description:
      '`lat,lng[,radiusKm]`: only items whose address has a location (within the radius, great circle), each with `distance` in km (3 decimals), nearest first unless `sort` is given',
  },
  q: {
    name: 'q',
    in: 'query',
    schema: { type: 'string' },
    description:
      'Full-text search (PRODUCT §12): each word (a run of letters and digits) must begin a word of the item, ignoring case and accents; no operators. Without `sort`, best matches first (ties by id).',
  },
  groupBy: {
    name: 'groupBy',
    in: 'query',
    schema: { type: 'string' },
    description:
      "Up to 3 comma-separated group keys (PRODUCT §19): default scalar fields, associations by their role (`client`, answered `{id}`), or `day(f)`, `week(f)`, `month(f)`, `year(f)` of a date or date-time field in the account's time zone (`2026-12-01`, `2026-W49`, `2026-12`, `2026`). None: one group of every item.",
  },
  aggregate: {
    name: 'aggregate',
    in: 'query',
    schema: { type: 'string', default: 'count' },
    description:
      'Comma-separated `count`, `sum(f)`, `avg(f)`, `min(f)`, `max(f)` over number fields (money exact; an average rounded like the field, halves away from zero); `min` and `max` also over dates and date-times.',
  },
  page: { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 } },
  recordsPerPage: {
    name: 'recordsPerPage',
    in: 'query',
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
};

const errs = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/E${s}` }]));
const COMMON = [400, 401, 403, 404, 405, 429, 500, 503];
const WRITE = [...COMMON, 408, 413, 415, 422];

function operation(
  c: Collection,
  id: string,
  summary: string,
  opts: { params?: Json[]; body?: string; ok: string; write?: boolean },
): Json {
  const N = pascal(c.name);
  return {
    tags: [c.name],
    operationId: id,
    summary,
    parameters: [param('XVersion'), param('XMethod'), ...(opts.params ?? [])],
    ...(opts.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { [c.name]: { type: 'array', maxItems: MAX_ITEMS, items: ref(opts.body) } },
                  required: [c.name],
                  additionalProperties: false,
                },
              },
            },
          },
        }
      : {}),
    responses: {
      200: { description: 'Success', content: { 'application/json': { schema: ref(`${N}${opts.ok}`) } } },
      ...errs(...(opts.write ? WRITE : COMMON)),
    },
  };
}

function pathsFor(c: Collection): Record<string, Json> {
  const N = pascal(c.name);
  const { plural, singular } = nounsOf(c);
  const list = [
    'fields',
    'where',
    'sort',
    ...(c.search ? ['q'] : []),
    'page',
    'recordsPerPage',
    ...(locationColumns(c) ? ['near'] : []),
  ].map(param);
  const collection: Json = {
    get: operation(c, `list${N}`, `List ${plural}`, { params: list, ok: 'List' }),
    patch: operation(c, `update${N}`, `Update ${plural} (each item names its id)`, {
      body: `${N}Update`,
      ok: 'Write',
      write: true,
    }),
    delete: operation(c, `delete${N}`, `Delete ${plural}`, { body: `${N}Delete`, ok: 'Deleted', write: true }),
  };
  if (!c.createVia)
    collection.post = operation(c, `create${N}`, `Create ${plural}`, { body: `${N}Create`, ok: 'Write', write: true });
  // Written only by the server: GET alone (the other methods answer 405).
  if (c.readOnly) for (const m of ['post', 'patch', 'delete']) delete collection[m];
  if (c.appendOnly) for (const m of ['patch', 'delete']) delete collection[m];
  const item: Json = {
    parameters: [param('id')],
    get: operation(c, `get${N}Item`, `Read one ${singular}`, { params: [param('fields')], ok: 'List' }),
    patch: operation(c, `update${N}Item`, `Update one ${singular} (the id may be left out of the item)`, {
      body: `${N}ItemUpdate`,
      ok: 'Write',
      write: true,
    }),
    delete: {
      ...operation(c, `delete${N}Item`, `Delete one ${singular} (no body needed)`, { ok: 'Deleted', write: true }),
    },
  };
  if (c.readOnly || c.appendOnly) for (const m of ['patch', 'delete']) delete item[m];
  const summary = operation(c, `summarize${N}`, `Summarize ${plural}: groups and aggregates`, {
    params: ['groupBy', 'aggregate', 'where', 'page', 'recordsPerPage'].map(param),
    ok: 'List',
  });
  (summary.responses as Json)[200] = {
    description:
      'Success: the groups in ascending order of their keys (nulls first); recordsCount is the number of groups',
    content: { 'application/json': { schema: ref('Summary') } },
  };
  const paths: Record<string, Json> = {
    [`/${c.name}`]: collection,
    [`/${c.name}/{id}`]: item,
    [`/${c.name}/summary`]: { get: summary },
  };
  for (const [action, doc] of Object.entries(c.actionDocs ?? {})) {
    const at = doc.on === 'item' ? `/${c.name}/{id}/${action}` : `/${c.name}/${action}`;
    const get = c.getActions?.includes(action) ?? false;
    const op = operation(c, `${action}${N}`, doc.summary, { ok: 'Write', write: !get });
    // A GET action still refuses what its item's state does not allow (a job without a place).
    if (get) Object.assign(op.responses as Json, errs(422));
    if (doc.response)
      (op.responses as Json)[200] = {
        description: 'Success',
        content: { 'application/json': { schema: doc.response } },
      };
    else if (doc.answers)
      (op.responses as Json)[200] = {
        description: 'Success',
        content: { 'application/json': { schema: ref(`${pascal(doc.answers)}Write`) } },
      };
    paths[at] = {
      ...(doc.on === 'item' ? { parameters: [param('id')] } : {}),
      [get ? 'get' : 'post']: {
        ...op,
        description: doc.description,
        parameters: [...(op.parameters as Json[]), ...(doc.parameters ?? [])],
        ...(doc.requestBody ? { requestBody: doc.requestBody } : {}),
      },
    };
  }
  return paths;
}

export function buildOpenApi(collections: Iterable<Collection>, publicUrl: string): Json {
  const cs = [...collections];
  const schemas: Record<string, Json> = { ...SHARED_SCHEMAS, ...OAUTH_SCHEMAS, Summary: SUMMARY_SCHEMA };
  for (const c of cs) {
    Object.assign(schemas, schemasFor(c));
    const N = pascal(c.name);
    schemas[`${N}ItemUpdate`] = { ...schemas[`${N}Update`], required: [] };
    schemas[`${N}Delete`] = {
      type: 'object',
      properties: { id: { type: 'integer', minimum: 1, maximum: MAX_ID } },
      required: ['id'],
      additionalProperties: false,
    };
  }
  // Without `fields`, an event is one of the recorded collections' events (its type says which).
  const events = cs.find((c) => c.name === 'events');
  if (events) {
    const recorded = cs.filter((c) => c.recorded !== false);
    for (const c of recorded) schemas[`${pascal(c.name)}Event`] = eventSchema(c, events);
    schemas.EventsDefault = {
      description: 'An event as answered without `fields`: its `type` and `collection` say whose `data` it carries.',
      oneOf: recorded.map((c) => ref(`${pascal(c.name)}Event`)),
    };
  }
  // Plain text: OpenAPI scope descriptions are not CommonMark, and Swagger UI shows them as they are.
  const scopes = {
    default:
      "The client's registered permission set (collection.read and collection.write permissions, such as jobs.read), or the part of it the owner kept ticked",
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Field-service management API',
      version: API_VERSION,
      description:
        'JSON API over named collections. Every request and response carries a collection of items; writes are atomic. ' +
        'Every JSON response has `Content-Type: application/json;charset=UTF-8`, `Cache-Control: no-store`, `Pragma: no-cache` and `X-Version`. ' +
        `At most ${MAX_ITEMS} items per write and 1 MiB per JSON body. Access tokens come from the OAuth 2.0 authorization code flow (\`/oauth2/code\`, \`/oauth2/token\`).`,
    },
    servers: [{ url: publicUrl }],
    security: [{ oauth2: ['default'] }, { bearer: [] }],
    tags: [
      ...cs.map((c) => ({ name: c.name, description: c.description })),
      { name: 'oauth2', description: 'Authorization server (RFC 6749)' },
      { name: 'operations', description: 'Health and metrics, for the operator' },
    ],
    paths: {
      ...withEventStream(withRetries(Object.assign({}, ...cs.map(pathsFor)))),
      ...Object.assign({}, ...cs.map((c) => c.extraPaths ?? {})),
      ...oauthPaths(),
      ...operationsPaths(),
    },
    components: {
      schemas,
      parameters: { ...PARAMETERS, ...RETRY_PARAMETERS, ...STREAM_PARAMETERS },
      headers: RETRY_HEADERS,
      responses: errorResponses(),
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description:
            'Authorization code grant with a confidential client; PKCE (S256) accepted. Add `access_type=offline` for a refresh token.',
          flows: {
            authorizationCode: {
              authorizationUrl: `${publicUrl}/oauth2/code`,
              tokenUrl: `${publicUrl}/oauth2/token`,
              refreshUrl: `${publicUrl}/oauth2/token`,
              scopes,
            },
          },
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An access token from /oauth2/token: `Authorization: Bearer <token>`',
        },
        clientBasic: {
          type: 'http',
          scheme: 'basic',
          description: 'Client ID and secret at /oauth2/token (form-url-encoded, RFC 6749 Appendix B)',
        },
      },
    },
  };
}
