import { accountsCreate, accountsList } from './accounts.js';
import { accountsExport, accountsImport } from './transfer.js';
import { backup } from './backup.js';
import { clientsCertify, clientsCreate, clientsList, clientsRevoke, clientsRotateSecret } from './clients.js';
import { commandHelp, usageLine, type Command } from './command.js';
import { doctor } from './doctor.js';
import { solve } from './solve.js';
import { eventsPurge, tokensRevoke } from './tokens.js';
import { usersCreate, usersSetPassword } from './users.js';

export const COMMANDS: Command[] = [
  accountsCreate,
  accountsList,
  accountsExport,
  accountsImport,
  usersCreate,
  usersSetPassword,
  clientsCreate,
  clientsList,
  clientsCertify,
  clientsRevoke,
  clientsRotateSecret,
  tokensRevoke,
  eventsPurge,
  doctor,
  backup,
  solve,
];

/** The command named by the first one or two words, and the words after it. */
export function findCommand(argv: string[]): { command: Command; args: string[] } | undefined {
  for (const words of [2, 1]) {
    const command = COMMANDS.find((c) => c.name === argv.slice(0, words).join(' '));
    if (command) return { command, args: argv.slice(words) };
  }
  return undefined;
}

export const USAGE = `usage: npm run --silent fsm -- <command> [options]
       npm run --silent fsm -- <command> --help

commands:
${COMMANDS.map((c) => `  ${usageLine(c)}`).join('\n')}`;

export const HELP = `fsm: the operator's command line of the field-service API server.

It works on the storage the server uses, with the same environment (DATA_DIR, or DATABASE_URL
for PostgreSQL; see the README's settings), also while the server runs; \`solve\` needs no storage
(it reads a problem on stdin). It prints JSON on stdout;
on error, a message on stderr and a non-zero exit (2: wrong usage, 1: the command failed).

${USAGE}

${COMMANDS.map((c) => `  ${c.name.padEnd(22)}${c.summary}`).join('\n')}
`;

/** The help of the commands under a first word (`fsm clients --help`). */
export function groupHelp(word: string): string | undefined {
  const group = COMMANDS.filter((c) => c.name.split(' ')[0] === word);
  if (!group.length) return undefined;
  return `${group.map((c) => commandHelp(c)).join('\n')}`;
}
