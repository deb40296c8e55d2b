import type { Executor } from '../db/tx.js';

/** PRODUCT §2: after 5 failed attempts on one login within 15 minutes, refuse it for 15 minutes. */
export const MAX_FAILURES = 5;
export const WINDOW_MS = 15 * 60 * 1000;
export const LOCK_MS = 15 * 60 * 1000;

/**
 * Locked while the newest failure is under 15 minutes old and it closes a run of 5 failures
 * within 15 minutes. Refused attempts are not recorded, so the lock does not extend itself.
 */
export async function isLocked(db: Executor, login: string, now: number): Promise<boolean> {
  const recent = await db
    .selectFrom('login_attempts')
    .select('at')
    .where('login', '=', login)
    .where('at', '>', now - WINDOW_MS - LOCK_MS)
    .orderBy('at', 'desc')
    .limit(MAX_FAILURES)
    .execute();
  if (recent.length < MAX_FAILURES) return false;
  const newest = Number(recent[0].at);
  return newest - Number(recent[MAX_FAILURES - 1].at) <= WINDOW_MS && now < newest + LOCK_MS;
}

/** Counted per login string whether or not such a user exists, so the lock tells nothing. */
export async function recordFailure(db: Executor, login: string, now: number): Promise<void> {
  await db.insertInto('login_attempts').values({ login, at: now }).execute();
  await db
    .deleteFrom('login_attempts')
    .where('login', '=', login)
    .where('at', '<=', now - WINDOW_MS - LOCK_MS)
    .execute();
}

export async function clearFailures(db: Executor, login: string): Promise<void> {
  await db.deleteFrom('login_attempts').where('login', '=', login).execute();
}
