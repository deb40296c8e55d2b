import { AccountError } from '../accounts/service.js';
import { ConfigError, loadConfig } from '../config.js';
import { openServices } from '../services.js';
import { ClientError } from '../oauth/grants/clients.js';
import { commandHelp, parse } from './command.js';
import { findCommand, groupHelp, HELP, USAGE } from './commands.js';
import { CommandError, UsageError } from './validate.js';

const isHelp = (a: string | undefined) => a === '--help' || a === '-h' || a === 'help';

/** The admin CLI (every command but `solve`): JSON on stdout; on error a message on stderr and a non-zero exit. */
async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && isHelp(argv[0])) {
    process.stdout.write(HELP);
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = argv.length === 2 && isHelp(argv[1]) ? groupHelp(argv[0]) : undefined;
    if (group) {
      process.stdout.write(group);
      return 0;
    }
    const name = argv
      .filter((a) => !a.startsWith('-'))
      .slice(0, 2)
      .join(' ');
    process.stderr.write(`${argv.length ? `unknown command '${name}'\n` : ''}${USAGE}\n`);
    return 2;
  }
  const { command, args } = found;
  const { values, positionals, help } = parse(command, args);
  if (help) {
    process.stdout.write(commandHelp(command));
    return 0;
  }
  if (command.needsDatabase === false) {
    // `doctor` reads the configuration itself: a bad setting is one of the things it reports.
    const out = await command.run({
      database: undefined as never,
      services: undefined as never,
      config: undefined as never,
      values,
      positionals,
    });
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return (out as { ok?: boolean }).ok === false ? 1 : 0;
  }
  const config = loadConfig();
  const services = await openServices(config, { poolSize: 1 });
  try {
    const out = await command.run({ database: services.database, services, config, values, positionals });
    if (!command.streams) process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } finally {
    await services.database.close();
  }
}

const usage = (err: unknown) =>
  err instanceof UsageError || String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS');

/** Messages we wrote for the operator are shown as they are; anything else stays generic. */
function message(err: unknown): string {
  if (
    usage(err) ||
    err instanceof CommandError ||
    err instanceof AccountError ||
    err instanceof ClientError ||
    err instanceof ConfigError
  ) {
    return (err as Error).message;
  }
  return `failed: ${(err as Error).message ?? String(err)}`;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`error: ${message(err)}\n`);
    process.exitCode = usage(err) ? 2 : 1;
  },
);
