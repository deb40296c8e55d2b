import type { Executor } from '../db/tx.js';
import { findLogin, moveLogin } from '../auth/logins.js';
import { hashPassword } from '../auth/secrets.js';
import type { RoleKind } from '../auth/context.js';
import type { Caller } from '../collections/machinery/collection.js';
import type { ChangeRecording, Writer } from '../collections/machinery/write/index.js';
import { seedStatuses } from '../collections/statuses/seed.js';
import { users } from '../collections/users/index.js';
import { searchTextOf } from '../collections/machinery/search.js';

export interface NewAccount {
  companyName: string;
  firstName: string;
  lastName: string;
  mobile: string;
  login: string;
  password: string;
  email?: string;
  /** ISO 4217 code (default USD) and IANA time zone (default UTC), PRODUCT §1. */
  currency?: string;
  timeZone?: string;
}

export const ROLES: { name: string; kind: RoleKind }[] = [
  { name: 'Administrator', kind: 'administrator' },
  { name: 'Employee', kind: 'employee' },
  { name: 'Contractor', kind: 'contractor' },
];

/** What every account starts with besides its roles; collections add their seeds here. */
export const accountSeeds: ((
  db: Executor,
  changes: ChangeRecording,
  accountId: number,
  now: number,
) => Promise<void>)[] = [seedStatuses];

/** Who acts when the operator (the CLI) changes items: no user, no client. */
export function operator(accountId: number, now: number, publicUrl = ''): Caller {
  return { accountId, userId: 0, role: 'administrator', permissions: new Set(), clientId: '', now, publicUrl };
}

export class AccountError extends Error {}

/** Creates an account, its roles and its first user, who is the account's Administrator. */
export async function createAccount(writer: Writer, input: NewAccount, now = Date.now()) {
  const passwordHash = await hashPassword(input.password);
  // The account id is known once its row is in: the caller is completed before anything is recorded.
  const caller = operator(0, now);
  return writer.transact(caller, async (db, changes) => {
    if (await findLogin(db, input.login)) throw new AccountError(`the login '${input.login}' is already in use`);
    const account = await db
      .insertInto('accounts')
      .values({
        company_name: input.companyName,
        licenses: 1,
        country_code: 0,
        company_account_code: null,
        currency: input.currency ?? 'USD',
        time_zone: input.timeZone ?? 'UTC',
        created: now,
        modified: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    caller.accountId = account.id;
    const roles = new Map<RoleKind, number>();
    for (const r of ROLES) {
      const row = await db
        .insertInto('roles')
        .values({ account_id: account.id, name: r.name, kind: r.kind })
        .returning('id')
        .executeTakeFirstOrThrow();
      roles.set(r.kind, row.id);
    }
    for (const seed of accountSeeds) await seed(db, changes, account.id, now);
    const searched = {
      first_name: input.firstName,
      last_name: input.lastName,
      company_name: input.companyName,
      email: input.email ?? null,
      login: input.login,
    };
    const user = await db
      .insertInto('users')
      .values({
        // The words `q` finds the user by, as the write pipeline writes them (PRODUCT §12).
        search_text: searchTextOf(users, searched),
        account_id: account.id,
        role_id: roles.get('administrator')!,
        login: input.login,
        password_hash: passwordHash,
        first_name: input.firstName,
        last_name: input.lastName,
        company_name: input.companyName,
        email: input.email ?? null,
        phone: null,
        mobile: input.mobile,
        hourly_rate: 0,
        active: 1,
        deleted: 0,
        colour: '#000000',
        is_assignable: 0,
        status_message: null,
        status_timestamp: null,
        created: now,
        modified: now,
      })
      .returning(['id', 'login'])
      .executeTakeFirstOrThrow();
    await moveLogin(db, { accountId: account.id, userId: user.id }, null, input.login);
    changes.created(users, [user.id]);
    return { account: { id: account.id }, user: { id: user.id, login: user.login as string } };
  });
}
