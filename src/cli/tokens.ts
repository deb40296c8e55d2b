import { sql } from 'kysely';
import { idOption, type Command } from './command.js';
import { CommandError, UsageError } from './validate.js';

export const tokensRevoke: Command = {
  name: 'tokens revoke',
  summary: "Revokes every live access and refresh token of one user (all clients) or of one client (all users).",
  details: 'Give exactly one of --user and --client. Prints {"revoked":N}, the number of tokens that were still live.',
  options: {
    user: { type: 'string', value: 'ID', help: 'a user id' },
    client: { type: 'string', value: 'CLIENT_ID', help: 'a client id' },
  },
  async run({ database, values }) {
    if ((values.user === undefined) === (values.client === undefined)) throw new UsageError('give exactly one of --user and --client');
    const db = database.db;
    let q = db.updateTable('oauth_tokens').set({ revoked: 1 }).where('revoked', '=', 0);
    if (values.user !== undefined) {
      const id = idOption(values, 'user');
      if (!(await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst())) throw new CommandError(`no user ${id}`);
      q = q.where('user_id', '=', id);
    } else {
      const clientId = values.client as string;
      if (!(await db.selectFrom('oauth_clients').select('id').where('client_id', '=', clientId).executeTakeFirst())) throw new CommandError(`no client '${clientId}'`);
      q = q.where('client_id', '=', clientId);
    }
    const r = await q.executeTakeFirst();
    return { revoked: Number(r.numUpdatedRows) };
  },
};

const DAY_MS = 24 * 3600 * 1000;

export const eventsPurge: Command = {
  name: 'events purge',
  summary: 'Deletes the events older than EVENTS_RETENTION_DAYS (default 30). Run it daily (cron, a timer).',
  details: 'Prints {"purged":N}; {"purged":0} while this version records no events.',
  async run({ database, config }) {
    const table = (await database.db.introspection.getTables()).find((t) => t.name === 'events');
    const column = table?.columns.find((c) => c.name === 'occurred' || c.name === 'created')?.name;
    if (!table || !column) return { purged: 0 };
    const cutoff = Date.now() - config.eventsRetentionDays * DAY_MS;
    const r = await sql`delete from events where ${sql.ref(column)} < ${cutoff}`.execute(database.db);
    return { purged: Number(r.numAffectedRows ?? 0) };
  },
};
