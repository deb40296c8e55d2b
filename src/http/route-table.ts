import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods the app's own (non-API) routes answer at a path, e.g. ['POST'] for /oauth2/token; empty when none. */
    routeMethods(path: string): string[];
  }
}

/**
 * Remembers every route registered after it (the API's catch-all `/*` aside), so a request with
 * another method gets 405 with `Allow` instead of a 404: every 405 names what is allowed.
 */
export function routeTable(app: FastifyInstance): void {
  const routes: { re: RegExp; methods: string[] }[] = [];
  // The first segments of those routes ('oauth2', 'docs', ...): a path starting otherwise (every
  // API request, /jobs/5) is none of theirs, known without testing each route's pattern.
  const firstSegments = new Set<string>();
  let paramFirst = false;
  app.addHook('onRoute', (r) => {
    if (r.url === '/*') return;
    const re = new RegExp(
      `^${r.url
        .split('/')
        .map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')}/?$`,
    );
    routes.push({ re, methods: Array.isArray(r.method) ? r.method : [r.method] });
    const first = r.url.split('/')[1] ?? '';
    if (first.startsWith(':') || first.includes('*')) paramFirst = true;
    else firstSegments.add(first);
  });
  const none: string[] = [];
  app.decorate('routeMethods', (path: string) => {
    const end = path.indexOf('/', 1);
    if (!paramFirst && !firstSegments.has(end === -1 ? path.slice(1) : path.slice(1, end))) return none;
    const found = new Set(routes.filter((r) => r.re.test(path)).flatMap((r) => r.methods));
    return ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'].filter((m) => found.has(m));
  });
}
