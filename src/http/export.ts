import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../auth/bearer.js';
import { exportAccount, exportedCollections } from '../accounts/transfer/export.js';
import { checkMayExport } from '../collections/policy.js';
import type { Caller } from '../collections/machinery/collection.js';
import { ApiError } from '../errors.js';
import { API_VERSION } from './envelope.js';
import { enforceRateLimit, tokenBucket } from './rate-limit/index.js';

/**
 * Rows of one turn of an export on the server's thread: each page (read, presented, written) runs
 * between two of other requests' turns. On SQLite the page's statement runs on the thread too,
 * so the turns are short: W1 beside exports against W1 alone (BENCH_ONLY=reports, 2026-12-03) was
 * 0.27 at 100 rows a page, 0.48 at 25, 0.53 at 10 (the export alone 51,200 items/s then 26,800).
 * On PostgreSQL, 100 rows gave 0.56 at 34,800 items/s, 10 rows 0.79 at 11,500: 100 is kept there.
 * The CLI, alone in its process, reads 100 (docs/reports.md).
 */
const turnRows = (onThread: boolean) => (onThread ? 10 : 100);

/**
 * `GET /export` (PRODUCT §19): the caller's account as the CLI's export streams it, without
 * password hashes or file bytes (files keep their signed `downloadUrl`), for an Administrator whose
 * token holds every exported collection's `.read`. Read on one snapshot that holds no write lock
 * (src/db: Database.snapshot), a page at a time as the client reads: other requests go on meanwhile.
 */
export async function exportPlugin(app: FastifyInstance): Promise<void> {
  const collections = exportedCollections(app.services.registry);
  app.get('/export', async (request: FastifyRequest, reply: FastifyReply) => {
    const v = request.headers['x-version'];
    if (v === undefined || v === '') throw new ApiError('versionMissing');
    if (v !== API_VERSION) throw new ApiError('versionUnsupported');
    if (Object.keys(request.query as object).length)
      throw new ApiError('badModifier', 'GET /export takes no query parameters');
    const auth = await authenticate(app.database, request.headers.authorization, app.clock());
    await enforceRateLimit(reply, app.rateLimits.api, tokenBucket(auth.tokenHash));
    const caller: Caller = { ...auth, publicUrl: app.config.publicUrl };
    checkMayExport(caller, collections);
    const out = new PassThrough();
    const write = (line: string) =>
      out.write(`${line}\n`) ? undefined : new Promise<void>((resolve) => out.once('drain', () => resolve()));
    // A client that goes away ends the export at its next line (the snapshot is then released).
    request.raw.once('close', () => out.destroy());
    exportAccount(
      app.database,
      app.services.registry,
      app.services.blobs,
      auth.accountId,
      { publicUrl: caller.publicUrl, now: auth.now, page: turnRows(app.database.dialect.statementsOnThread) },
      (line) => {
        if (out.destroyed) throw new Error('the client went away');
        return write(line);
      },
    ).then(
      () => out.end(),
      (err: unknown) => {
        if (!out.destroyed) request.log.error({ err }, 'export failed');
        out.destroy(err as Error);
      },
    );
    return reply.code(200).header('content-type', 'application/x-ndjson').send(out);
  });
}
