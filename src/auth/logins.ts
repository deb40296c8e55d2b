import type { Executor } from '../db/tx.js';
import { insertRows } from '../db/runner.js';

/**
 * Logins are unique in the whole service, and a sign-in finds its user's account by one: the
 * `logins` table (migration 019) holds each login with its account and user. It has no
 * `account_id` on purpose: a distributed database copies it to every node (a reference table),
 * so neither the sign-in nor the uniqueness check asks every account (docs/deployment.md). It is
 * written in the transaction that gives a user a login, changes it or deletes the user; its primary
 * key refuses a login already taken, whatever the other transaction. (A user deleted by SQL outside
 * the server leaves its login taken until its `logins` row is deleted too.)
 */
export async function moveLogin(
  db: Executor,
  user: { accountId: number; userId: number },
  before: string | null,
  after: string | null,
): Promise<void> {
  if (before === after) return;
  if (before !== null)
    await db
      .deleteFrom('logins')
      .where('login', '=', before)
      .where('account', '=', user.accountId)
      .where('user_id', '=', user.userId)
      .execute();
  if (after !== null)
    await db.insertInto('logins').values({ login: after, account: user.accountId, user_id: user.userId }).execute();
}

/** New users' logins, by a few statements (an import's batch of users). */
export async function addLogins(
  db: Executor,
  logins: { login: string; accountId: number; userId: number }[],
): Promise<void> {
  await insertRows(
    db,
    'logins',
    logins.map((l) => ({ login: l.login, account: l.accountId, user_id: l.userId })),
  );
}

/** Those of `logins` that a user has already (an import's batch asks at once). */
export async function takenLogins(db: Executor, logins: string[]): Promise<string[]> {
  const rows = await db.selectFrom('logins').select('login').where('login', 'in', logins).execute();
  return rows.map((r) => r.login);
}

/** The user a login belongs to, if any. */
export async function findLogin(
  db: Executor,
  login: string,
): Promise<{ accountId: number; userId: number } | undefined> {
  const row = await db
    .selectFrom('logins')
    .select(['account', 'user_id'])
    .where('login', '=', login)
    .executeTakeFirst();
  return row && { accountId: row.account, userId: row.user_id };
}
