/**
 * The operator's routes (src/http/health.ts, src/http/metrics.ts) in the OpenAPI document: no
 * token, no X-Version; meant for load balancers and Prometheus, not for API clients.
 */
type Json = Record<string, unknown>;

const json = (schema: Json) => ({ 'application/json': { schema } });
const status = (values: string[], extra: Json = {}): Json => ({
  type: 'object',
  properties: { status: { enum: values }, ...extra },
  required: ['status'],
});

export function operationsPaths(): Record<string, Json> {
  return {
    '/healthz': {
      get: {
        tags: ['operations'],
        operationId: 'liveness',
        summary: 'Liveness: the process answers (no database work)',
        security: [],
        responses: { 200: { description: 'Alive', content: json(status(['ok'])) } },
      },
    },
    '/readyz': {
      get: {
        tags: ['operations'],
        operationId: 'readiness',
        summary: 'Readiness: the database answers within 1 s, every migration is applied, not shutting down',
        security: [],
        responses: {
          200: { description: 'Ready', content: json(status(['ready'])) },
          503: {
            description: 'Not ready, with the reason (`Retry-After: 1`)',
            headers: { 'Retry-After': { required: true, schema: { type: 'string' } } },
            content: json(status(['unavailable'], { reason: { type: 'string' } })),
          },
        },
      },
    },
    '/export': {
      get: {
        tags: ['operations'],
        operationId: 'exportAccount',
        summary: "The caller's account as NDJSON (PRODUCT §19): an Administrator whose token holds every `.read`",
        description:
          'One JSON object a line: `{"format":"fsm-export","version":1,"account":{…}}`, then `{"collection":"…","item":{…}}` for every item, references first; no password hashes, secrets or file bytes (files keep their `downloadUrl`). docs/reports.md.',
        parameters: [{ $ref: '#/components/parameters/XVersion' }],
        responses: {
          200: {
            description: 'The export, streamed',
            content: { 'application/x-ndjson': { schema: { type: 'string' } } },
          },
          400: { $ref: '#/components/responses/E400' },
          401: { $ref: '#/components/responses/E401' },
          403: { $ref: '#/components/responses/E403' },
          429: { $ref: '#/components/responses/E429' },
        },
      },
    },
    '/metrics': {
      get: {
        tags: ['operations'],
        operationId: 'metrics',
        summary: 'Prometheus metrics, behind the bearer secret METRICS_TOKEN (404 when it is unset)',
        security: [{ bearer: [] }],
        responses: {
          200: { description: 'The Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
          401: { $ref: '#/components/responses/E401' },
          404: { $ref: '#/components/responses/E404' },
        },
      },
    },
  };
}
