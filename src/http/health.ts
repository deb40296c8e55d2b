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
    // At most one readiness query is outstanding: probes arriving while it runs (even after their
    // own timeout gave up on it) wait for that same query, so a database that hangs is never sent
    // one query per probe, each holding a pool connection the API needs.
    let pending: Promise<Check> | undefined;

    const query = (): Promise<Check> =>
      sql<{ name: string }>`select name from kysely_migration`.execute(app.database.db).then(
        ({ rows }): Check => {
          const applied = new Set(rows.map((r) => r.name));
          const missing = MIGRATION_NAMES.filter((n) => !applied.has(n));
          return missing.length
            ? { ready: false, reason: `migrations not applied: ${missing.join(', ')}` }
            : { ready: true };
        },
        (): Check => ({ ready: false, reason: 'the database is unavailable' }),
      );

    async function check(): Promise<Check> {
      pending ??= query().finally(() => {
        pending = undefined;
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<Check>((resolve) => {
        timer = setTimeout(
          () => resolve({ ready: false, reason: 'the database did not answer within 1 s' }),
          READY_TIMEOUT_MS,
        );
      });
      try {
        return await Promise.race([pending, timeout]);
      } finally {
        clearTimeout(timer);
      }
    }

    app.get('/healthz', { logLevel: 'warn' }, async (_request, reply) => sendJson(reply, 200, { status: 'ok' }));
    app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
      const c = await check();
      return c.ready
        ? sendJson(reply, 200, { status: 'ready' })
        : sendJson(reply.header('retry-after', '1'), 503, { status: 'unavailable', reason: c.reason });
    });
  },
  { name: 'health' },
);
