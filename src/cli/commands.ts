import { parseArgs } from 'node:util';
import type { Services } from '../services.js';
import { createAccount } from '../accounts/service.js';
import { certifyClient, listClients, registerClient, revokeClient } from '../oauth/clients.js';
import { checkAccountInput, required, UsageError } from './validate.js';

type Command = (services: Services, args: string[]) => Promise<unknown>;

const str = { type: 'string' } as const;

async function accountsCreate({ writer }: Services, args: string[]) {
  const { values } = parseArgs({
    args,
    options: { 'company-name': str, 'first-name': str, 'last-name': str, mobile: str, login: str, password: str, email: str },
    strict: true,
    allowPositionals: false,
  });
  required(values, ['company-name', 'first-name', 'last-name', 'mobile', 'login', 'password']);
  const input = {
    companyName: values['company-name']!.trim(),
    firstName: values['first-name']!.trim(),
    lastName: values['last-name']!.trim(),
    mobile: values.mobile!,
    login: values.login!,
    password: values.password!,
    ...(values.email !== undefined ? { email: values.email } : {}),
  };
  checkAccountInput(input);
  return createAccount(writer, input);
}

async function clientsCreate({ database }: Services, args: string[]) {
  const { values } = parseArgs({
    args,
    options: { name: str, 'redirect-uri': { type: 'string', multiple: true }, permissions: str, 'allow-permission-choice': { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  });
  required(values, ['name']);
  return registerClient(database, {
    name: values.name!,
    redirectUris: values['redirect-uri'] ?? [],
    permissions: values.permissions?.split(',').map((p) => p.trim()).filter((p) => p !== ''),
    allowPermissionChoice: values['allow-permission-choice'] ?? false,
  });
}

/** Commands taking exactly one CLIENT_ID. */
function withClientId(fn: (database: Services['database'], clientId: string) => Promise<unknown>): Command {
  return async ({ database }, args) => {
    const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
    if (positionals.length !== 1) throw new UsageError('expected exactly one CLIENT_ID');
    return fn(database, positionals[0]);
  };
}

/** Only what an operator needs to see: never a secret or its hash. */
async function clientsList({ database }: Services, args: string[]) {
  parseArgs({ args, options: {}, strict: true, allowPositionals: false });
  return (await listClients(database)).map((c) => ({ ...c, created: new Date(c.created).toISOString() }));
}

export const COMMANDS: Record<string, Command> = {
  'accounts create': accountsCreate,
  'clients create': clientsCreate,
  'clients certify': withClientId(async (db, clientId) => {
    await certifyClient(db, clientId);
    return { clientId, certified: true };
  }),
  'clients list': clientsList,
  'clients revoke': withClientId(async (db, clientId) => {
    await revokeClient(db, clientId);
    return { clientId, revoked: true };
  }),
};

export const USAGE = `usage: npm run --silent fsm -- <command>
  accounts create --company-name S --first-name S --last-name S --mobile +NNN --login S --password S [--email S]
  clients create --name S --redirect-uri URI [--redirect-uri URI ...] [--permissions p,q] [--allow-permission-choice]
  clients certify CLIENT_ID
  clients list
  clients revoke CLIENT_ID`;
