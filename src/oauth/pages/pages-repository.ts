import type { Executor } from '../../db/tx.js';

/**
 * The statements of the sign-in pages: failed sign-ins, sessions, and what the pages read of users
 * and clients. The modules beside it keep the rules (throttle.ts, session.ts, sign-in.ts, …).
 */

// Failed sign-ins (throttle.ts).

/** The newest `limit` failed attempts on a login since `since`, newest first. */
export async function recentFailures(db: Executor, login: string, since: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('login_attempts')
    .select('at')
    .where('login', '=', login)
    .where('at', '>', since)
    .orderBy('at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.at));
}

/** Records a failed attempt on a login and forgets its attempts up to `forget`. */
export async function addFailure(db: Executor, login: string, now: number, forget: number): Promise<void> {
  await db.insertInto('login_attempts').values({ login, at: now }).execute();
  await db.deleteFrom('login_attempts').where('login', '=', login).where('at', '<=', forget).execute();
}

export async function forgetFailures(db: Executor, login: string): Promise<void> {
  await db.deleteFrom('login_attempts').where('login', '=', login).execute();
}

// Sign-in sessions (session.ts, sign-out.ts).

/** The session of this hash (in its account, when the cookie names one) of a user who is not deleted. */
export function sessionByHash(db: Executor, hash: string, accountId: number | undefined) {
  return db
    .selectFrom('auth_sessions as s')
    .innerJoin('users as u', (j) => j.onRef('u.account_id', '=', 's.account_id').onRef('u.id', '=', 's.user_id'))
    .select(['s.user_id', 's.account_id', 's.csrf_token', 's.expires_at'])
    .where('s.session_hash', '=', hash)
    .$if(accountId !== undefined, (q) => q.where('s.account_id', '=', accountId!))
    .where('u.deleted', '=', 0)
    .executeTakeFirst();
}

/** Stores a new session (its hash) after dropping the expired ones. */
export async function insertSession(
  db: Executor,
  s: { hash: string; userId: number; accountId: number; csrf: string; expiresAt: number },
  now: number,
): Promise<void> {
  await db.deleteFrom('auth_sessions').where('expires_at', '<=', now).execute();
  await db
    .insertInto('auth_sessions')
    .values({
      session_hash: s.hash,
      user_id: s.userId,
      account_id: s.accountId,
      csrf_token: s.csrf,
      expires_at: s.expiresAt,
      created: now,
    })
    .execute();
}

export async function deleteSession(db: Executor, hash: string, accountId: number): Promise<void> {
  await db.deleteFrom('auth_sessions').where('session_hash', '=', hash).where('account_id', '=', accountId).execute();
}

// Users and clients as the pages show them (sign-in.ts, consent-context.ts).

/** The account's user of this login who is not deleted, with the hash to check a password against. */
export function signInUser(db: Executor, accountId: number, userId: number, login: string) {
  return db
    .selectFrom('users')
    .select(['id', 'account_id', 'password_hash'])
    .where('account_id', '=', accountId)
    .where('id', '=', userId)
    .where('login', '=', login)
    .where('deleted', '=', 0)
    .executeTakeFirst();
}

/** The names and login of the account's user. */
export function userNames(db: Executor, accountId: number, userId: number) {
  return db
    .selectFrom('users')
    .select(['first_name', 'last_name', 'login'])
    .where('account_id', '=', accountId)
    .where('id', '=', userId)
    .executeTakeFirst();
}

/** Who runs a client (null: not stated). */
export async function clientPublisher(db: Executor, clientId: string): Promise<string | null> {
  const row = await db
    .selectFrom('oauth_clients')
    .select('publisher')
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return row?.publisher ?? null;
}
