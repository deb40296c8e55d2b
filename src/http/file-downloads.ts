import type { FastifyInstance } from 'fastify';
import { openDownload } from '../collections/files/download.js';
import { DOWNLOAD_PREFIX } from '../collections/files/links.js';

/** RFC 6266 + RFC 5987: an ASCII fallback and the exact name percent-encoded as UTF-8. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * The files' signed download route (`downloadUrl`): outside the API plugin, so the `/:collection`
 * dispatcher never sees these URLs; a browser follows the link without a token or X-Version.
 */
export async function fileDownloadsPlugin(app: FastifyInstance): Promise<void> {
  app.get(`${DOWNLOAD_PREFIX}/:account/:id`, async (request, reply) => {
    const { account, id } = request.params as { account: string; id: string };
    const { expires, signature } = request.query as Record<string, unknown>;
    const file = await openDownload(app.services, { account, id, expires, signature }, app.clock());
    return (
      reply
        .code(200)
        .header('content-type', file.mimeType)
        .header('content-length', file.size)
        .header('content-disposition', contentDisposition(file.name))
        .header('x-content-type-options', 'nosniff')
        // Even if a browser were talked into rendering it, the content gets no script and no origin.
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .send(file.stream)
    );
  });
}
