import { listAccounts } from '../accounts/repository.js';
import { createAccount } from '../accounts/service.js';
import type { Command } from './command.js';
import { checkAccountInput } from './validate.js';

const s = (help: string, required = true, value = 'S') => ({ type: 'string' as const, help, required, value });

export const accountsCreate: Command = {
  name: 'accounts create',
  summary: "Creates an account with its roles and first user, the account's Administrator.",
  details: 'Prints {"account":{"id":N},"user":{"id":N,"login":"S"}}.',
  options: {
    'company-name': s('the company name'),
    'first-name': s("the Administrator's first name"),
    'last-name': s("the Administrator's last name"),
    mobile: s('mobile number: + and 7 to 15 digits', true, '+NNN'),
    login: s('sign-in name, unique in the whole service'),
    password: s('at least 10 characters'),
    email: s('e-mail address', false),
    currency: s('ISO 4217 currency code of the amounts (default USD)', false, 'XXX'),
    'time-zone': s('IANA time zone of the account (default UTC)', false, 'Area/City'),
  },
  async run({ services, values }) {
    const input = {
      companyName: (values['company-name'] as string).trim(),
      firstName: (values['first-name'] as string).trim(),
      lastName: (values['last-name'] as string).trim(),
      mobile: values.mobile as string,
      login: values.login as string,
      password: values.password as string,
      ...(values.email !== undefined ? { email: values.email as string } : {}),
      ...(values.currency !== undefined ? { currency: values.currency as string } : {}),
      ...(values['time-zone'] !== undefined ? { timeZone: values['time-zone'] as string } : {}),
    };
    checkAccountInput(input);
    return createAccount(services.writer, input);
  },
};

export const accountsList: Command = {
  name: 'accounts list',
  summary: 'Lists every account: id, company name, users (not deleted) and when it was created.',
  async run({ database }) {
    const rows = await listAccounts(database.db);
    return rows.map((r) => ({
      id: r.id,
      companyName: r.company_name,
      users: Number(r.users),
      created: new Date(Number(r.created)).toISOString(),
    }));
  },
};
