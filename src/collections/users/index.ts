import { moveLogin } from '../../auth/logins.js';
import { hashPassword } from '../../auth/secrets.js';
import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import { revokeTokens } from '../../oauth/tokens.js';
import { defineCollection, type ItemContext } from '../machinery/collection.js';
import { userFields } from './schema.js';

function validate({ op, item, caller }: ItemContext): ApiErrorBody[] {
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

/** Beyond the role matrix: only Administrators change roles, restore users or touch others. */
function authorize({ caller, op, item, existing }: ItemContext): void {
  if (caller.role === 'administrator') {
    if (existing && existing.id === caller.userId && (item.deleted === true || op === 'delete')) {
      throw new ApiError('roleForbids', 'nobody deletes themself');
    }
    return;
  }
  if (item.role !== undefined || item.deleted !== undefined || item.login !== undefined) {
    throw new ApiError('roleForbids', 'only an Administrator changes roles, logins or deletion');
  }
}

export const users = defineCollection({
  name: 'users',
  table: 'users',
  description: 'The people of the account: office staff, field workers and contractors.',
  fields: userFields,
  counted: true,
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
    own: (caller, eb, table) => eb(`${table}.id`, '=', caller.userId),
  },
  rules: {
    validate,
    authorize,
    async prepare({ item, row }) {
      if (typeof item.newPassword === 'string') row.password_hash = await hashPassword(item.newPassword);
    },
    async fill({ caller, db, op, item, row, existing, once }) {
      if (op === 'create' && row.role_id === undefined) {
        row.role_id = await once(
          'employeeRole',
          async () =>
            (
              await db
                .selectFrom('roles')
                .select('id')
                .where('account_id', '=', caller.accountId)
                .where('kind', '=', 'employee')
                .executeTakeFirstOrThrow()
            ).id,
        );
      }
      if (item.deleted !== undefined) row.active = item.deleted ? 0 : 1;
      if (op === 'update' && typeof item.newPassword === 'string' && !existing?.login && item.login === undefined) {
        row.password_hash = null; // a password without a login cannot be used; do not keep one
      }
    },
    async after({ db, caller, op, id, item, existing }) {
      const before = (existing?.login as string | null | undefined) ?? null;
      const after = op === 'delete' ? null : item.login === undefined ? before : (item.login as string | null);
      await moveLogin(db, { accountId: caller.accountId, userId: id }, before, after);
      if (item.deleted === true || op === 'delete') await revokeTokens(db, { accountId: caller.accountId, userId: id });
      if (item.deleted === true)
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
