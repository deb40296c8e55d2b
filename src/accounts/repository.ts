import { sql } from 'kysely';
import type { Executor } from '../db/tx.js';

/**
 * The operator's statements (the CLI's, across accounts): the accounts and a user
 * found by the id an operator types. Writes go through the write pipeline as the API's do.
 */

/** Every account with its users not deleted, oldest first. */
export function listAccounts(db: Executor) {
  return db
    .selectFrom('accounts as a')
    .select([
      'a.id',
      'a.company_name',
      'a.created',
      sql<number>`(select count(*) from users u where u.account_id = a.id and u.deleted = 0)`.as('users'),
    ])
    .orderBy('a.id')
    .execute();
}

export async function accountExists(db: Executor, id: number): Promise<boolean> {
  return (await db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/**
 * A user as an operator names one: by id alone (ids are unique across accounts, so the operator
 * need not know the account), or by account and id (a login's owner).
 */
export function operatorUser(db: Executor, id: number, accountId?: number) {
  return db
    .selectFrom('users')
    .select(['id', 'account_id', 'login'])
    .where('id', '=', id)
    .$if(accountId !== undefined, (q) => q.where('account_id', '=', accountId!))
    .executeTakeFirst();
}
