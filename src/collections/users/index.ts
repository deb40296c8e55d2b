import { accountActionDocs, setAccount } from './account.js';
import { moveLogin } from '../../auth/logins.js';
import { hashPassword } from '../../auth/secrets.js';
import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { revokeTokens } from '../../auth/tokens.js';
import type { Executor } from '../../db/tx.js';
import { defineCollection, type Caller, type ItemContext } from '../machinery/collection.js';
import { isCaller } from '../policy.js';
import { anyLiveWithRole, roleOf } from './repository.js';
import { userFields } from './schema.js';
import { calendarActionDocs, calendarLink, calendarUnlink } from './calendar.js';

function validate({ op, item, caller }: ItemContext<'users'>): ApiErrorBody[] {
  const errors: ApiErrorBody[] = [];
  const pw = item.newPassword;
  if ((pw === undefined) !== (item.newPasswordConfirm === undefined)) {
    errors.push(validationError('required', pw === undefined ? 'newPassword' : 'newPasswordConfirm'));
  } else if (pw !== undefined && pw !== item.newPasswordConfirm) {
    errors.push(validationError('invalid', 'newPasswordConfirm', 'must equal newPassword'));
  }
  if (op === 'create') {
    if (pw !== undefined && item.login === undefined) errors.push(validationError('required', 'login'));
    if (item.login !== undefined && item.login !== null && pw === undefined)
      errors.push(validationError('required', 'newPassword'));
    const account = item.account as { id?: number } | undefined;
    if (account && account.id !== caller.accountId) errors.push(validationError('reference', 'account'));
  } else if (item.account !== undefined && (item.account as { id?: number })?.id !== caller.accountId) {
    errors.push(validationError('conflict', 'account', 'a user cannot move to another account'));
  }
  return errors;
}

/** The user themself, or an Administrator (PRODUCT §13: calendar feeds). */
const themselfOrAdministrator = (caller: Pick<Caller, 'role' | 'userId'>, id: number) =>
  caller.role === 'administrator' || caller.userId === id;

/** Beyond the role matrix: nobody deletes themself; only Administrators delete, change roles, restore users or touch others. */
function authorize({ caller, op, item, existing }: ItemContext<'users'>): void {
  if (existing && existing.id === caller.userId && (item.deleted === true || op === 'delete')) {
    throw new ApiError('roleForbids', 'nobody deletes themself');
  }
  if (caller.role === 'administrator') return;
  if (op === 'delete') throw new ApiError('roleForbids', 'only an Administrator deletes users');
  if (item.role !== undefined || item.deleted !== undefined || item.login !== undefined) {
    throw new ApiError('roleForbids', 'only an Administrator changes roles, logins or deletion');
  }
}

const idOf = (v: unknown) => (v as { id?: number } | null | undefined)?.id;

/**
 * The account keeps an Administrator who is not deleted: once the batch is written, when it took
 * that role from someone (demoted, deleted logically or physically) and none is left, the items
 * that did so fail.
 */
async function keepsAnAdministrator({ db, items }: { db: Executor; items: ItemContext[] }): Promise<ApiErrorBody[][]> {
  const errors: ApiErrorBody[][] = items.map(() => []);
  const touching = items.filter(
    (it) =>
      it.existing &&
      !it.existing.deleted &&
      (it.op === 'delete' || it.item.deleted === true || it.item.role !== undefined),
  );
  if (!touching.length) return errors;
  const accountId = items[0].caller.accountId;
  const admin = { id: await roleOf(db, accountId, 'administrator') };
  const removed = touching.filter(
    (it) =>
      it.existing!.role_id === admin.id &&
      (it.op === 'delete' || it.item.deleted === true || idOf(it.item.role) !== admin.id),
  );
  if (!removed.length) return errors;
  if (await anyLiveWithRole(db, accountId, admin.id)) return errors;
  const why = 'the account would be left without an Administrator';
  for (const it of removed) {
    errors[it.index].push(
      it.op === 'delete'
        ? validationError('invalid', 'id', `deleting this user: ${why}`)
        : validationError('conflict', it.item.deleted === true ? 'deleted' : 'role', why),
    );
  }
  return errors;
}

export const users = defineCollection({
  name: 'users',
  table: 'users',
  description: 'The people of the account: office staff, field workers and contractors.',
  fields: userFields,
  customFields: true,
  search: ['firstName', 'lastName', 'companyName', 'email', 'login'],
  counted: true,
  // PRODUCT §19: the operator's export carries password hashes, so people keep their sign-in.
  transfer: { hidden: { passwordHash: 'password_hash' } },
  // PRODUCT §13: calendar feeds; they need users.read, not users.write (readActions).
  // Issue 50: what the account's documents print of the business (Administrators).
  actions: { calendarLink, calendarUnlink, account: setAccount },
  actionDocs: { ...calendarActionDocs, ...accountActionDocs },
  readActions: ['calendarLink', 'calendarUnlink'],
  example: (ref) => ({
    account: ref('accounts'),
    firstName: 'Bob',
    lastName: 'Builder',
    mobile: '+447700900123',
    email: 'bob@example.com',
  }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'own', contractor: 'none' },
    actions: {
      calendarLink: { item: themselfOrAdministrator, why: 'calendarLink: only the user themself or an Administrator' },
      calendarUnlink: {
        item: themselfOrAdministrator,
        why: 'calendarUnlink: only the user themself or an Administrator',
      },
      account: { roles: ['administrator'], why: "only an Administrator writes the account's members" },
    },
    own: (caller, eb, table) => isCaller(caller, eb, `${table}.id`),
    ownReads: [],
  },
  rules: {
    validate,
    authorize,
    // Hashed once the batch passed every check (src/collections/machinery/write/index.ts).
    slowColumns({ item }) {
      const pw = item.newPassword;
      return typeof pw === 'string' ? async () => ({ password_hash: await hashPassword(pw) }) : undefined;
    },
    verify: keepsAnAdministrator,
    async fill({ caller, db, op, item, row, existing, once }) {
      if (op === 'create' && row.role_id === undefined) {
        row.role_id = await once('employeeRole', () => roleOf(db, caller.accountId, 'employee'));
      }
      if (item.deleted !== undefined) row.active = item.deleted ? 0 : 1;
      if (op === 'update' && typeof item.newPassword === 'string' && !existing?.login && item.login === undefined) {
        row.password_hash = null; // a password without a login cannot be used; do not keep one
      }
    },
    async after({ db, caller, op, id, item, existing }) {
      const before = existing?.login ?? null;
      const after = op === 'delete' ? null : item.login === undefined ? before : (item.login as string | null);
      await moveLogin(db, { accountId: caller.accountId, userId: id }, before, after);
      if (item.deleted === true || op === 'delete') await revokeTokens(db, { accountId: caller.accountId, userId: id });
      // A new password ends the user's sign-in sessions (whoever knew the old one is signed out);
      // apps' tokens stay: the owner revokes those on the connected-applications page.
      if (item.deleted === true || typeof item.newPassword === 'string')
        await db
          .deleteFrom('auth_sessions')
          .where('account_id', '=', caller.accountId)
          .where('user_id', '=', id)
          .execute();
      // A code not yet redeemed is spent too, or it would still buy tokens (alive again on restore).
      if (item.deleted === true)
        await db
          .updateTable('oauth_codes')
          .set({ used_at: caller.now })
          .where('account_id', '=', caller.accountId)
          .where('user_id', '=', id)
          .where('used_at', 'is', null)
          .execute();
    },
  },
});
