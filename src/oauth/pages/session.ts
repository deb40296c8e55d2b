import type { CookieSerializeOptions } from '@fastify/cookie';
import type { Config } from '../../config.js';
import type { Executor } from '../../db/tx.js';
import { accountSecret, hashToken, randomToken, secretKey } from '../../auth/secrets.js';
import { insertSession, sessionByHash } from './pages-repository.js';

export const SESSION_COOKIE = 'fsm_session';
/** How long an owner stays signed in to the authorization pages. */
export const SESSION_TTL_MS = 8 * 3600 * 1000;

export interface Session {
  userId: number;
  accountId: number;
  /** Consent forms must carry this (CSRF tied to the session). */
  csrf: string;
}

/** Our cookies never reach scripts or the API paths; Secure when the public origin is https. */
export function cookieOptions(config: Config, maxAgeMs?: number): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: '/oauth2',
    secure: config.publicUrl.startsWith('https:'),
    ...(maxAgeMs !== undefined ? { maxAge: Math.floor(maxAgeMs / 1000) } : {}),
  };
}

/** The signed-in owner, if the cookie names a live session of a user who is not deleted. */
export async function currentSession(
  db: Executor,
  cookie: string | undefined,
  now: number,
): Promise<Session | undefined> {
  if (!cookie) return undefined;
  const { hash, accountId } = secretKey(cookie);
  const row = await sessionByHash(db, hash, accountId);
  if (!row || row.expires_at <= now) return undefined;
  return { userId: row.user_id, accountId: row.account_id, csrf: row.csrf_token };
}

/** Starts a session; the cookie value is returned once and stored only as a hash. */
export async function startSession(
  db: Executor,
  user: { userId: number; accountId: number },
  now: number,
): Promise<string> {
  const token = accountSecret(user.accountId);
  await insertSession(
    db,
    {
      hash: hashToken(token),
      userId: user.userId,
      accountId: user.accountId,
      csrf: randomToken(),
      expiresAt: now + SESSION_TTL_MS,
    },
    now,
  );
  return token;
}
