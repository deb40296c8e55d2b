import readline from 'node:readline';
import { exportAccount, ExportError } from '../accounts/transfer/export.js';
import { importAccount, ImportError } from '../accounts/transfer/import.js';
import { idOption, type Command } from './command.js';
import { CommandError } from './validate.js';

/** Writes a line to stdout, waiting while the reader is behind (memory stays bounded). */
async function writeLine(line: string): Promise<void> {
  if (!process.stdout.write(`${line}\n`)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

export const accountsExport: Command = {
  name: 'accounts export',
  summary: "Writes an account's data to stdout as NDJSON, read on one snapshot, while the server runs (PRODUCT §19).",
  details:
    'First {"format":"fsm-export","version":1,"account":{…}}, then {"collection":"…","item":{…}} for every item, references first; users with their passwordHash; no tokens, sessions, events or deliveries; webhooks without secrets. docs/reports.md.',
  options: {
    account: { type: 'string', value: 'ID', required: true, help: 'the account to export' },
    files: { type: 'boolean', help: "each file's bytes too, as base64 lines of at most 1 MiB" },
  },
  streams: true,
  async run({ database, services, config, values }) {
    try {
      await exportAccount(
        database,
        services.registry,
        services.blobs,
        idOption(values, 'account'),
        { files: !!values.files, hidden: true, publicUrl: config.publicUrl },
        writeLine,
      );
    } catch (err) {
      if (err instanceof ExportError) throw new CommandError(err.message);
      throw err;
    }
    return undefined;
  },
};

export const accountsImport: Command = {
  name: 'accounts import',
  summary: 'Reads an export on stdin into a new account, in one transaction: all of it or nothing (PRODUCT §19).',
  details:
    'Prints {"account":{"id":N},"items":N,"webhooks":[{"id":N,"secret":"whsec_…"}]}: new ids, numbers and times kept, each webhook a new secret. A line it cannot take fails it with the line number.',
  async run({ database, services }) {
    const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    // Its iterator made now: lines read before the import's transaction has begun are kept for it
    // (a readline interface drops the lines it reads while nothing iterates it).
    const iterator = lines[Symbol.asyncIterator]();
    try {
      return await importAccount(database, services.registry, services.blobs, {
        [Symbol.asyncIterator]: () => iterator,
      });
    } catch (err) {
      if (err instanceof ImportError) throw new CommandError(err.message);
      throw err;
    } finally {
      lines.close();
    }
  },
};
