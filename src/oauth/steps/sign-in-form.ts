import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { csrfMatches, LOGIN_CSRF_COOKIE } from '../pages/csrf.js';
import { single } from '../pages/form.js';
import { cookieOptions, SESSION_COOKIE, SESSION_TTL_MS, startSession } from '../pages/session.js';
import { signIn } from '../pages/sign-in.js';

export type SignInOutcome = { ok: true } | { ok: false; status: number; error: string; login?: string };

/**
 * A posted login form: CSRF (the pre-session cookie), the password check with its throttle, and on
 * success a new session cookie. The caller decides where to go next (303) or re-shows the form.
 */
export async function submitSignIn(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<SignInOutcome> {
  if (!csrfMatches(request.cookies[LOGIN_CSRF_COOKIE], single(request.body, 'csrf'))) {
    return { ok: false, status: 403, error: 'The form expired. Please sign in again.' };
  }
  const login = single(request.body, 'login') ?? '';
  const result = await signIn(app.database.db, login, single(request.body, 'password') ?? '', app.clock());
  if (!result.ok) {
    return result.reason === 'locked'
      ? { ok: false, status: 429, error: 'Too many failed sign-ins for this login. Try again in 15 minutes.', login }
      : { ok: false, status: 401, error: 'The login or password is incorrect.', login };
  }
  const token = await startSession(app.database.db, result, app.clock());
  reply.setCookie(SESSION_COOKIE, token, cookieOptions(app.config, SESSION_TTL_MS));
  return { ok: true };
}
