import type { Executor } from '../../db/tx.js';
import { addFailure, forgetFailures, recentFailures } from './pages-repository.js';

/** PRODUCT §2: after 5 failed attempts on one login within 15 minutes, refuse it for 15 minutes. */
export const MAX_FAILURES = 5;
export const WINDOW_MS = 15 * 60 * 1000;
export const LOCK_MS = 15 * 60 * 1000;

/**
 * Locked while the newest failure is under 15 minutes old and it closes a run of 5 failures
 * within 15 minutes. Refused attempts are not recorded, so the lock does not extend itself.
 */
export async function isLocked(db: Executor, login: string, now: number): Promise<boolean> {
  const recent = await recentFailures(db, login, now - WINDOW_MS - LOCK_MS, MAX_FAILURES);
  if (recent.length < MAX_FAILURES) return false;
  const newest = recent[0];
  return newest - recent[MAX_FAILURES - 1] <= WINDOW_MS && now < newest + LOCK_MS;
}

/** Counted per login string whether or not such a user exists, so the lock tells nothing. */
export async function recordFailure(db: Executor, login: string, now: number): Promise<void> {
  await addFailure(db, login, now, now - WINDOW_MS - LOCK_MS);
}

export async function clearFailures(db: Executor, login: string): Promise<void> {
  await forgetFailures(db, login);
}
