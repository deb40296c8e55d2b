import type { FastifyInstance } from 'fastify';
import { hashToken, secretKey } from '../../auth/secrets.js';
import { csrfMatches } from './csrf.js';
import { deleteSession } from './pages-repository.js';
import { cookieOptions, currentSession, SESSION_COOKIE } from './session.js';

export const SIGN_OUT_PATH = '/oauth2/signout';
const TOKEN_PARAM = 'signout';

/**
 * The link's token: derived from the session's CSRF token, so a link planted elsewhere cannot sign
 * the owner out, and the consent form's own token never appears in a URL (history, proxies).
 */
const signOutToken = (csrf: string) => hashToken(`signout:${csrf}`);

/**
 * The consent page's "not you?" link: the authorization request travels along, with the token.
 * A link, not a second form: the consent page keeps exactly one form.
 */
export function signOutUrl(query: string, csrf: string): string {
  const params = new URLSearchParams(query);
  params.set(TOKEN_PARAM, signOutToken(csrf));
  return `${SIGN_OUT_PATH}?${params}`;
}

/** Ends the session (when the token matches) and goes back to the request's start: the login form. */
export function signOutRoute(app: FastifyInstance): void {
  app.get(SIGN_OUT_PATH, async (request, reply) => {
    const i = request.url.indexOf('?');
    const params = new URLSearchParams(i < 0 ? '' : request.url.slice(i + 1));
    const sent = params.get(TOKEN_PARAM) ?? undefined;
    params.delete(TOKEN_PARAM);
    params.delete('prompt');
    const cookie = request.cookies[SESSION_COOKIE];
    const session = await currentSession(app.database.db, cookie, app.clock());
    if (session && csrfMatches(signOutToken(session.csrf), sent)) {
      await deleteSession(app.database.db, secretKey(cookie!).hash, session.accountId);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(app.config));
    }
    // Always our own page, whatever the query holds: never an open redirect.
    return reply.redirect(`/oauth2/code?${params}`, 303);
  });
}
