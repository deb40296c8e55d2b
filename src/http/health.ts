import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sql } from 'kysely';
import { MIGRATION_NAMES } from '../db/migrate.js';
import { sendJson } from './envelope.js';

/** How long the database may take to answer a readiness probe. */
export const READY_TIMEOUT_MS = 1000;

type Check = { ready: true } | { ready: false; reason: string };

/**
 * GET /healthz: the process is alive (no I/O). GET /readyz: it can serve, i.e. the database answers
 * within a second and has every migration this code knows. While the server shuts down the app's
 * onRequest hook answers 503 to these as to everything. No token, no X-Version, no rate limit,
 * nothing logged at info level: load balancers poll them every few seconds.
 */
export const healthPlugin = fp(
  async (app: FastifyInstance) => {
    // One probe at a time reaches the database; concurrent probes share its answer, so a slow
    // database is never queued a pile of checks.
    let inFlight: Promise<Check> | undefined;

    async function check(): Promise<Check> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<Check>((resolve) => {
        timer = setTimeout(() => resolve({ ready: false, reason: 'the database did not answer within 1 s' }), READY_TIMEOUT_MS);
      });
      const query = sql<{ name: string }>`select name from kysely_migration`.execute(app.database.db).then(
        ({ rows }): Check => {
          const applied = new Set(rows.map((r) => r.name));
          const missing = MIGRATION_NAMES.filter((n) => !applied.has(n));
          return missing.length ? { ready: false, reason: `migrations not applied: ${missing.join(', ')}` } : { ready: true };
        },
        (): Check => ({ ready: false, reason: 'the database is unavailable' }),
      );
      try {
        return await Promise.race([query, timeout]);
      } finally {
        clearTimeout(timer);
      }
    }

    app.get('/healthz', { logLevel: 'warn' }, async (_request, reply) => sendJson(reply, 200, { status: 'ok' }));
    app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
      inFlight ??= check().finally(() => {
        inFlight = undefined;
      });
      const c = await inFlight;
      return c.ready ? sendJson(reply, 200, { status: 'ready' }) : sendJson(reply.header('retry-after', '1'), 503, { status: 'unavailable', reason: c.reason });
    });
  },
  { name: 'health' },
);
