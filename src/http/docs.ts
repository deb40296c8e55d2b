import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { registry } from '../collections/index.js';
import { JSON_TYPE } from './envelope.js';
import { ApiError } from '../errors.js';
import { buildOpenApi } from './openapi/document.js';

// Swagger UI's own prebuilt files from the swagger-ui-dist package: the page needs no CDN.
const SWAGGER_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  // Where the Authorize button's popup lands (the client's redirect_uri): it hands the code back
  // to the page. Its script is a file beside it, so the page's CSP needs no inline script.
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Field-service API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an online validator.
// docExpansion 'none': tags start folded; with every operation listed at once (over 200 of them)
// Swagger UI renders for minutes. A tag opens in a fraction of a second.
// oauth2RedirectUrl: its default is derived from the page's directory (`/oauth2-redirect.html`);
// the file is served under /docs. Register this URL as the client's redirect URI to use Authorize.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect.html',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  docExpansion: 'none',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout'
});
`;

/** Scripts only from this origin; Swagger UI sets inline styles and data: images. */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'";

/**
 * `GET /`: where to start. Paths, not absolute URLs, so the index is right behind any proxy.
 * `/healthz` and `/readyz` are the operations endpoints.
 */
export const INDEX = {
  name: 'Field-service API',
  links: {
    documentation: '/docs',
    openapi: '/openapi.json',
    authorizationServerMetadata: '/.well-known/oauth-authorization-server',
    health: '/healthz',
    readiness: '/readyz',
  },
};

/**
 * `GET /` (the index), `/openapi.json` and the `/docs` reference page: public (no token, no X-Version), outside the
 * collection dispatcher. The document is built once, from whatever collections are registered.
 */
export async function docsPlugin(app: FastifyInstance): Promise<void> {
  // Built once per public origin (the configuration's; tests set it once they know their port).
  let doc: { origin: string; text: string } | undefined;
  app.get('/', async (_request, reply) => reply.header('content-type', JSON_TYPE).send(JSON.stringify(INDEX)));
  app.get('/openapi.json', async (_request, reply) => {
    if (doc?.origin !== app.config.publicUrl)
      doc = { origin: app.config.publicUrl, text: JSON.stringify(buildOpenApi(registry.list, app.config.publicUrl)) };
    return reply.header('content-type', JSON_TYPE).header('cache-control', 'no-cache').send(doc.text);
  });

  const html = (reply: import('fastify').FastifyReply, type: string, body: string) =>
    reply
      .header('content-type', type)
      .header('content-security-policy', CSP)
      .header('cache-control', 'no-cache')
      .send(body);
  app.get('/docs', async (_request, reply) => html(reply, 'text/html; charset=utf-8', PAGE));
  app.get('/docs/init.js', async (_request, reply) => html(reply, 'text/javascript; charset=utf-8', INIT));
  app.get('/docs/:asset', async (request, reply) => {
    const { asset } = request.params as { asset: string };
    if (!Object.hasOwn(ASSETS, asset)) throw new ApiError('notFound');
    if (ASSETS[asset].startsWith('text/html')) reply.header('content-security-policy', CSP);
    return reply
      .header('content-type', ASSETS[asset])
      .header('cache-control', 'public, max-age=86400')
      .send(fs.createReadStream(path.join(SWAGGER_DIR, asset)));
  });
}
