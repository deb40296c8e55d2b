import type { Executor } from '../../db/tx.js';
import { findLogin } from '../../auth/logins.js';
import { verifyPassword } from '../../auth/secrets.js';
import { signInUser } from './pages-repository.js';
import { clearFailures, isLocked, recordFailure } from './throttle.js';

export type SignIn = { ok: true; userId: number; accountId: number } | { ok: false; reason: 'invalid' | 'locked' };

/**
 * Checks a login and password. Unknown login, deleted user and wrong password give the same
 * answer, at the same cost (verifyPassword burns a hash when there is no stored one).
 */
export async function signIn(db: Executor, login: string, password: string, now: number): Promise<SignIn> {
  if (login.length === 0 || login.length > 200 || password.length > 1024) return { ok: false, reason: 'invalid' };
  if (await isLocked(db, login, now)) return { ok: false, reason: 'locked' };
  const owner = await findLogin(db, login);
  const user = owner && (await signInUser(db, owner.accountId, owner.userId, login));
  const ok = await verifyPassword(password, user?.password_hash ?? null);
  if (!ok || !user) {
    await recordFailure(db, login, now);
    return { ok: false, reason: 'invalid' };
  }
  await clearFailures(db, login);
  return { ok: true, userId: user.id, accountId: user.account_id };
}
