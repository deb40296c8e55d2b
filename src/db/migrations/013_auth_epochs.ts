import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

/**
 * A revocation epoch per account (`accounts.auth_epoch`), for the verified-token cache of
 * src/auth/bearer.ts: triggers bump it in the same transaction as every change that can make an
 * access token of the account fail, whoever makes it (API, authorization server, CLI, cascades):
 * an access token updated (revoked) or deleted, a user's `deleted` or `role_id` changed or the user
 * deleted, a role's `kind` changed, a client revoked or deleted (the accounts holding its tokens).
 * Every request reads the epoch by primary key; a cached token verified under another epoch is
 * verified again.
 */
const BUMP = (account: string) => `update accounts set auth_epoch = auth_epoch + 1 where id = ${account}`;
const BUMP_CLIENT = (clientId: string) =>
  `update accounts set auth_epoch = auth_epoch + 1 where id in (select distinct account_id from oauth_tokens where client_id = ${clientId} and kind = 'access')`;

/** Table, events, condition (on `old`/`new`), the bump. */
const TRIGGERS: [string, string, string, string][] = [
  ['oauth_tokens', 'update', `old.kind = 'access'`, BUMP('old.account_id')],
  ['oauth_tokens', 'delete', `old.kind = 'access'`, BUMP('old.account_id')],
  ['users', 'update', 'old.deleted <> new.deleted or old.role_id <> new.role_id', BUMP('old.account_id')],
  ['users', 'delete', 'true', BUMP('old.account_id')],
  ['roles', 'update', 'old.kind <> new.kind', BUMP('old.account_id')],
  ['oauth_clients', 'update', 'old.revoked <> new.revoked', BUMP_CLIENT('old.client_id')],
  ['oauth_clients', 'delete', 'true', BUMP_CLIENT('old.client_id')],
];

export const authEpochs = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('accounts')
      .addColumn('auth_epoch', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    for (const [table, event, when, bump] of TRIGGERS) {
      const name = `${table}_auth_epoch_${event}`;
      if (dialect === 'postgres') {
        await sql
          .raw(
            `create function fsm_${name}() returns trigger language plpgsql as $$
          begin ${bump}; return null; end $$`,
          )
          .execute(db);
        await sql
          .raw(
            `create trigger ${name} after ${event} on ${table} for each row when (${when}) execute function fsm_${name}()`,
          )
          .execute(db);
      } else {
        await sql.raw(`create trigger ${name} after ${event} on ${table} when ${when} begin ${bump}; end`).execute(db);
      }
    }
  },
});
