import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { loadConfig, sqliteFile } from '../config.js';
import type { Command } from './command.js';
import { CommandError } from './validate.js';

/** How long the backup waits for the server's write lock between its steps. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * `--to` as the operator meant it: relative to the directory they ran the command in (npm runs
 * scripts from the project's directory and says where it was started in INIT_CWD).
 */
const target = (to: string) => path.resolve(process.env.INIT_CWD ?? process.cwd(), to);

export const backup: Command = {
  name: 'backup',
  summary: "Copies the SQLite database to a new file with SQLite's online backup, while the server runs.",
  details:
    'Prints {"backup":"<absolute path>","bytes":N}. The file must not exist yet. For PostgreSQL it says what to run instead (pg_dump); see docs/operations.md.',
  options: { to: { type: 'string', value: 'FILE', required: true, help: 'the new backup file (never overwritten)' } },
  // It only reads the database: no migration runs first (a backup of an older database stays as it was).
  needsDatabase: false,
  async run({ values }) {
    const config = loadConfig();
    if (config.databaseUrl)
      throw new CommandError(
        'DATABASE_URL is PostgreSQL: back it up with pg_dump, e.g. pg_dump --format=custom "$DATABASE_URL" > FILE (docs/operations.md)',
      );
    const source = sqliteFile(config);
    if (!fs.existsSync(source)) throw new CommandError(`no database at ${source} (is DATA_DIR right?)`);
    const to = target(values.to as string);
    // Created here, exclusively: an existing file is never overwritten, even one made meanwhile.
    try {
      fs.closeSync(fs.openSync(to, 'wx'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST')
        throw new CommandError(`${to} already exists: give a new file name (a backup never overwrites)`);
      if (code === 'ENOENT') throw new CommandError(`the folder ${path.dirname(to)} does not exist`);
      throw new CommandError(`cannot create ${to}: ${code ?? (err as Error).message}`);
    }
    const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof SQLite;
    const db = new Driver(source, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    try {
      // After the first step, the rest in one step: one read of a consistent snapshot (WAL readers
      // do not hold the server's writers up), instead of small steps that start over whenever the
      // server commits in between.
      await db.backup(to, { progress: ({ totalPages }) => Math.max(totalPages, 100) });
    } catch (err) {
      fs.rmSync(to, { force: true });
      throw new CommandError(`the backup failed: ${(err as Error).message}`);
    } finally {
      db.close();
    }
    return { backup: to, bytes: fs.statSync(to).size };
  },
};
