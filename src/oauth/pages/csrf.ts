import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { randomToken, safeEqual } from '../../auth/secrets.js';
import { cookieOptions } from './session.js';

/** The pre-session cookie the login form's token must match (double submit; SameSite=Lax). */
export const LOGIN_CSRF_COOKIE = 'fsm_csrf';

/** The login form's CSRF token: the browser's pre-session cookie, created on first sight. */
export function loginCsrfToken(request: FastifyRequest, reply: FastifyReply, config: Config): string {
  const existing = request.cookies[LOGIN_CSRF_COOKIE];
  if (existing && existing.length >= 32) return existing;
  const token = randomToken();
  reply.setCookie(LOGIN_CSRF_COOKIE, token, cookieOptions(config));
  return token;
}

export const csrfMatches = (expected: string | undefined, sent: string | undefined): boolean =>
  expected !== undefined && sent !== undefined && expected.length > 0 && safeEqual(expected, sent);
