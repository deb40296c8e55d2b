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
