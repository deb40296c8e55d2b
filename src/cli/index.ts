#!/usr/bin/env node
import { AccountError } from '../accounts/service.js';
import { ConfigError, loadConfig } from '../config.js';
import { openServices } from '../services.js';
import { ClientError } from '../oauth/clients.js';
import { COMMANDS, USAGE } from './commands.js';
import { UsageError } from './validate.js';

/** The admin CLI: JSON on stdout; on error a message on stderr and a non-zero exit. */
async function main(argv: string[]): Promise<number> {
  const name = argv.slice(0, 2).join(' ');
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`${argv.length ? `unknown command '${name}'\n` : ''}${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  const services = await openServices(config, { poolSize: 1 });
  try {
    const out = await command(services, argv.slice(2));
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } finally {
    await services.database.close();
  }
}

/** Messages we wrote for the operator are shown as they are; anything else stays generic. */
function message(err: unknown): string {
  if (err instanceof UsageError || err instanceof AccountError || err instanceof ClientError || err instanceof ConfigError) return err.message;
  const code = (err as { code?: string }).code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) return (err as Error).message;
  return `failed: ${(err as Error).message ?? String(err)}`;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    process.stderr.write(`error: ${message(err)}\n`);
    process.exitCode = err instanceof UsageError || String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS') ? 2 : 1;
  },
);
