import type { Database } from '../db/index.js';
import type { RoleKind } from '../auth/context.js';
import { findLogin } from '../auth/logins.js';
import type { WriteResult } from '../collections/machinery/write/index.js';
import { accountExists, operatorUser } from '../accounts/repository.js';
import { roleOf } from '../collections/users/repository.js';
import { operator } from '../accounts/service.js';
import { clearFailures } from '../oauth/pages/throttle.js';
import { idOption, type Command } from './command.js';
import { CommandError, UsageError } from './validate.js';

const ROLES: RoleKind[] = ['administrator', 'employee', 'contractor'];
/** API field names as the operator typed them. */
const FLAGS: Record<string, string> = {
  firstName: '--first-name',
  lastName: '--last-name',
  mobile: '--mobile',
  email: '--email',
  login: '--login',
  newPassword: '--password',
  newPasswordConfirm: '--password',
  role: '--role',
  account: '--account',
};

/** The flag that gave a field: `customFields.badge` came from `--custom-field badge=…`. */
const flagOf = (field: string) =>
  FLAGS[field] ?? (field.startsWith('customFields.') ? `--custom-field ${field.slice('customFields.'.length)}` : field);

function throwFailures(out: WriteResult): asserts out is Extract<WriteResult, { result: 'success' }> {
  if (out.result === 'success') return;
  const errors = out.failures.flatMap((f) => f.errors);
  throw new CommandError(errors.map((e) => `${e.field ? `${flagOf(e.field)}: ` : ''}${e.message}`).join('; '));
}

/**
 * `--custom-field KEY=VALUE`, repeatable: the user's `customFields`, checked by the write pipeline
 * against the account's definitions as `POST /users` is. VALUE is read as JSON when it is JSON
 * (`7`, `true`, `"007"`, `null`), else taken as the text itself (`Gas Safe 123`): a text field whose
 * value would read as JSON (digits, `true`) is given quoted (`badge='"007"'`).
 */
function customFieldsOption(given: unknown): Record<string, unknown> | undefined {
  const list = Array.isArray(given) ? (given as string[]) : [];
  if (!list.length) return undefined;
  const out: Record<string, unknown> = {};
  for (const pair of list) {
    const at = pair.indexOf('=');
    const key = at < 0 ? '' : pair.slice(0, at).trim();
    if (!key) throw new UsageError(`--custom-field must be KEY=VALUE, not '${pair.slice(0, 80)}'`);
    if (Object.hasOwn(out, key)) throw new UsageError(`--custom-field ${key.slice(0, 80)} is given twice`);
    const raw = pair.slice(at + 1);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    out[key] = value;
  }
  return out;
}

async function mustExist(database: Database, id: number): Promise<void> {
  if (!(await accountExists(database.db, id))) throw new CommandError(`no account ${id}`);
}

export const usersCreate: Command = {
  name: 'users create',
  summary: 'Creates a user in an account, validated as POST /users is (an operator helping the account).',
  details:
    'Prints {"user":{"id":N,"login":S|null,"role":"employee"}}. New users are Employees unless --role says otherwise.',
  options: {
    account: { type: 'string', value: 'ID', required: true, help: 'the account id (see accounts list)' },
    'first-name': { type: 'string', required: true, help: 'first name' },
    'last-name': { type: 'string', required: true, help: 'last name' },
    mobile: { type: 'string', value: '+NNN', required: true, help: 'mobile number: + and 7 to 15 digits' },
    login: { type: 'string', help: 'sign-in name (with --password), unique in the whole service' },
    password: { type: 'string', help: 'at least 10 characters (with --login)' },
    role: { type: 'string', value: 'ROLE', help: 'administrator, employee (default) or contractor' },
    email: { type: 'string', help: 'e-mail address' },
    'custom-field': {
      type: 'string',
      multiple: true,
      value: 'KEY=VALUE',
      help: 'a custom field of users (repeatable): VALUE as JSON when it parses (7, true, "007"), else as text',
    },
  },
  // The operator acts as an Administrator of the account, through the same write pipeline as the
  // API, so the same validation, uniqueness and side effects (events) apply; the actor is nobody.
  async run({ database, services, values }) {
    const accountId = idOption(values, 'account');
    const role = (values.role ?? 'employee') as RoleKind;
    if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    if ((values.login === undefined) !== (values.password === undefined))
      throw new UsageError('--login and --password go together');
    const customFields = customFieldsOption(values['custom-field']);
    await mustExist(database, accountId);
    const roleId = await roleOf(database.db, accountId, role);
    const item: Record<string, unknown> = {
      account: { id: accountId },
      firstName: (values['first-name'] as string).trim(),
      lastName: (values['last-name'] as string).trim(),
      mobile: values.mobile,
      role: { id: roleId },
      ...(values.email !== undefined ? { email: values.email } : {}),
      ...(customFields ? { customFields } : {}),
      ...(values.login !== undefined
        ? { login: values.login, newPassword: values.password, newPasswordConfirm: values.password }
        : {}),
    };
    const out = await services.writer.write({
      collection: services.registry.get('users')!,
      caller: operator(accountId, Date.now()),
      op: 'create',
      input: [item],
    });
    throwFailures(out);
    const id = out.items[0].id as number;
    return { user: { id, login: (values.login as string | undefined) ?? null, role } };
  },
};

export const usersSetPassword: Command = {
  name: 'users set-password',
  summary: "Sets a user's password (validated as the API does) and lifts a sign-in lock on the login.",
  details: 'Name the user by --login or --user. Prints {"user":{"id":N,"login":"S"},"passwordSet":true}.',
  options: {
    login: { type: 'string', help: "the user's login" },
    user: { type: 'string', value: 'ID', help: "the user's id" },
    password: { type: 'string', required: true, help: 'the new password, at least 10 characters' },
  },
  async run({ database, services, values }) {
    if ((values.login === undefined) === (values.user === undefined))
      throw new UsageError('give exactly one of --login and --user');
    // An operator's lookup by id alone reads every account's users; a login names its account.
    const owner = values.user === undefined ? await findLogin(database.db, values.login as string) : undefined;
    const user =
      values.user !== undefined
        ? await operatorUser(database.db, idOption(values, 'user'))
        : await operatorUser(database.db, owner?.userId ?? 0, owner?.accountId ?? 0);
    if (!user)
      throw new CommandError(
        values.user !== undefined ? `no user ${values.user}` : `no user with the login '${values.login}'`,
      );
    if (!user.login)
      throw new CommandError(
        `user ${user.id} has no login, so a password would be useless; give one with PATCH /users`,
      );
    const password = values.password as string;
    const out = await services.writer.write({
      collection: services.registry.get('users')!,
      caller: operator(user.account_id, Date.now()),
      op: 'update',
      input: [{ id: user.id, newPassword: password, newPasswordConfirm: password }],
    });
    throwFailures(out);
    await clearFailures(database.db, user.login);
    return { user: { id: user.id, login: user.login }, passwordSet: true };
  },
};
