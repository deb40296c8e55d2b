import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { StoreUnavailableError } from '../../storage/blobs.js';
import { checkLink, DOWNLOAD_PREFIX, signingKey } from './links.js';
import { storeUnavailable } from './upload.js';

/** RFC 6266 + RFC 5987: an ASCII fallback and the exact name percent-encoded as UTF-8. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

const ID = /^[1-9]\d{0,14}$/;

async function serve(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const { account, id } = request.params as { account: string; id: string };
  const { expires, signature } = request.query as Record<string, unknown>;
  if (!ID.test(account) || !ID.test(id)) throw new ApiError('notFound');
  if (typeof expires !== 'string' || typeof signature !== 'string') throw new ApiError('linkInvalid');
  const check = checkLink(
    await signingKey(app.database.db),
    Number(account),
    Number(id),
    expires,
    signature,
    app.clock(),
  );
  if (check === 'invalid') throw new ApiError('linkInvalid');
  if (check === 'expired') throw new ApiError('linkExpired');
  const row = await app.database.db
    .selectFrom('files')
    .select(['name', 'mime_type', 'sha256'])
    .where('account_id', '=', Number(account))
    .where('id', '=', Number(id))
    .executeTakeFirst();
  // The link was genuine but the file has been deleted since.
  const blob =
    row &&
    (await app.services.blobs.open(row.sha256).catch((err) => {
      throw err instanceof StoreUnavailableError ? storeUnavailable(err) : err;
    }));
  if (!row || !blob) throw new ApiError('itemNotFound');
  return (
    reply
      .code(200)
      .header('content-type', row.mime_type)
      .header('content-length', blob.size)
      .header('content-disposition', contentDisposition(row.name))
      .header('x-content-type-options', 'nosniff')
      // Even if a browser were talked into rendering it, the content gets no script and no origin.
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'private, no-store')
      .send(blob.stream)
  );
}

/**
 * The file store of this app, and the download route: no bearer token, no X-Version (a browser
 * follows the link); the signature in the URL is the credential. Lives outside the API plugin,
 * so the `/:collection` dispatcher never sees these URLs.
 */
export async function filesPlugin(app: FastifyInstance): Promise<void> {
  app.get(`${DOWNLOAD_PREFIX}/:account/:id`, (request, reply) => serve(app, request, reply));
}
