/**
 * The OpenAPI side of safe retries and conflicts (PRODUCT §7): `Idempotency-Key` on every write,
 * `If-Match` on every write, `If-None-Match` and 304 on item reads, the ETag and
 * Idempotency-Replayed response headers. Added to the operations the collection paths already
 * have, so no operation is written twice.
 */
type Json = Record<string, unknown>;

const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const error = (status: number) => ({ $ref: `#/components/responses/E${status}` });

export const RETRY_PARAMETERS: Record<string, Json> = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: 257 },
    description:
      'Makes the write safe to retry (IETF httpapi draft): 1–255 printable ASCII characters, bare or quoted (`"…"`); anything else is 400 (1006). ' +
      "Scoped to the token's client and user. The first answer (status, body, headers) is kept 24 h and committed with the write: a repeat with " +
      'the same key, method, path and body gets it again with `Idempotency-Replayed: true` and nothing is done twice. The same key with another ' +
      'method, path or body: 422 (1249); while the first is still running: 409 (1090). 5xx answers are not kept. Ignored on GET.',
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description:
      'On an item: its ETag as last read (or `*`): when the item has changed since, the write is refused with 412 (1080) and nothing changes. ' +
      'A collection or an action has no ETag: only `*` matches it, any other value is 412 (1080) and nothing changes.',
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description:
      "The item's ETag as last read: while the item is unchanged the answer is 304 Not Modified, without a body.",
  },
};

export const RETRY_HEADERS: Record<string, Json> = {
  ETag: {
    description:
      "The item's strong entity tag; it changes whenever the item does (its fields, its association lists, SET NULL of a deleted reference).",
    schema: { type: 'string' },
  },
  IdempotencyReplayed: {
    description: '`true` on an answer kept from the first request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const NOT_MODIFIED = {
  description: 'Not Modified: If-None-Match names the current ETag',
  headers: { ETag: header('ETag') },
};

function withHeaders(response: Json | undefined, headers: Record<string, unknown>): Json | undefined {
  if (!response || '$ref' in response) return response;
  return { ...response, headers: { ...((response.headers as Json) ?? {}), ...headers } };
}

function amend(
  op: Json,
  extra: { params: string[]; responses: Record<string, Json>; okHeaders: Record<string, unknown> },
): Json {
  const responses = { ...(op.responses as Json), ...extra.responses };
  responses['200'] = withHeaders(responses['200'] as Json, extra.okHeaders);
  return { ...op, parameters: [...(op.parameters as Json[]), ...extra.params.map(param)], responses };
}

/** The collection paths with the retry and conditional headers, parameters and statuses added. */
export function withRetries(paths: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [path, item] of Object.entries(paths)) {
    const isItem = /\/\{id\}$/.test(path);
    const next: Json = { ...item };
    for (const method of ['post', 'patch', 'delete'] as const) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      // Every write may be conditional: an item's against its ETag, any other only as `*`.
      next[method] = amend(op, {
        params: ['IdempotencyKey', 'IfMatch'],
        responses: { 409: error(409), 412: error(412) },
        okHeaders: {
          'Idempotency-Replayed': header('IdempotencyReplayed'),
          ...(isItem && method === 'patch' ? { ETag: header('ETag') } : {}),
        },
      });
    }
    if (isItem && item.get)
      next.get = amend(item.get as Json, {
        params: ['IfNoneMatch'],
        responses: { 304: NOT_MODIFIED },
        okHeaders: { ETag: header('ETag') },
      });
    out[path] = next;
  }
  return out;
}
