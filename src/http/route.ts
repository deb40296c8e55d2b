import { ApiError } from '../errors.js';

/** `/:collection[/:item][/:action]` (spec §4.1). */
export interface ApiRoute {
  collection: string;
  item?: number;
  action?: string;
}

const PATH = /^\/([A-Za-z]+)(?:\/([0-9]+))?(?:\/([A-Za-z]+))?\/?$/;
export const METHODS = ['GET', 'POST', 'PATCH', 'DELETE'] as const;
export type Method = (typeof METHODS)[number];

export function parsePath(url: string): ApiRoute | undefined {
  const q = url.indexOf('?');
  const m = PATH.exec(q === -1 ? url : url.slice(0, q));
  if (!m) return undefined;
  // Any digits are an item id by the URL form; one no item can have (0, past the id range) is
  // answered 404 by the dispatcher, after authentication, like any missing item.
  const item = m[2] === undefined ? undefined : Number(m[2]);
  return { collection: m[1], item, action: m[3] };
}

/**
 * The method a request stands for (spec §4.2). `X-Method` is for clients that can only send POST:
 * it replaces POST. An override to GET is honoured from any method, as the spec's own example
 * (a PATCH with `X-Method: GET`): reading is always safe. Any other override of another method is
 * refused (400), so a method that must not change anything (GET, HEAD, OPTIONS) never does, and
 * PUT is not a back door to PATCH or DELETE. The same method as sent is no override.
 */
export function effectiveMethod(httpMethod: string, override: string | string[] | undefined): string {
  if (override === undefined) return httpMethod;
  const v = Array.isArray(override) ? override.join(',') : override;
  const m = v.trim().toUpperCase();
  if (!(METHODS as readonly string[]).includes(m)) throw new ApiError('badMethodOverride');
  if (m === 'GET' || m === httpMethod || httpMethod === 'POST') return m;
  throw new ApiError(
    'badMethodOverride',
    `X-Method replaces POST only (or asks for GET); send ${m} itself, or POST with X-Method: ${m}`,
  );
}

/**
 * Which methods each URL form allows (spec §4.2): actions take POST only (a collection's
 * `getActions`, GET only); items never POST; read-only collections GET.
 */
export function allowedMethods(r: ApiRoute, readOnly = false, appendOnly = false, getAction = false): Method[] {
  if (r.action) return getAction ? ['GET'] : ['POST'];
  if (readOnly) return ['GET'];
  if (appendOnly) return r.item !== undefined ? ['GET'] : ['GET', 'POST'];
  if (r.item !== undefined) return ['GET', 'PATCH', 'DELETE'];
  return ['GET', 'POST', 'PATCH', 'DELETE'];
}

/**
 * The answer for a method nothing takes at a URL: 405 with `Allow` when the path is one of the
 * app's own routes or of the API's URL form, else 404 (1033).
 */
export function notFoundOr405(app: { routeMethods(path: string): string[] }, method: string, url: string): ApiError {
  const path = url.split('?')[0];
  const other = app.routeMethods(path);
  const route = parsePath(url);
  const allow = other.length ? other : route ? allowedMethods(route) : [];
  if (!allow.length)
    return new ApiError('notFound', 'the URL form is /:collection[/:item][/:action] (letters, digits, letters)');
  return new ApiError(
    'methodNotAllowed',
    `${method.slice(0, 20)} ${path.slice(0, 100)}; allowed: ${allow.join(', ')}`,
    { allow: allow.join(', ') },
  );
}
