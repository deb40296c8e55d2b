import { purgeEvents } from '../collections/events/retention.js';
import { idOption, type Command } from './command.js';
import { CommandError, UsageError } from './validate.js';
import { revokeTokens } from '../auth/tokens.js';
import { operatorUser } from '../accounts/repository.js';
import { findClient } from '../oauth/grants/clients.js';

export const tokensRevoke: Command = {
  name: 'tokens revoke',
  summary: 'Revokes every live access and refresh token of one user (all clients) or of one client (all users).',
  details: 'Give exactly one of --user and --client. Prints {"revoked":N}, the number of tokens that were still live.',
  options: {
    user: { type: 'string', value: 'ID', help: 'a user id' },
    client: { type: 'string', value: 'CLIENT_ID', help: 'a client id' },
  },
  async run({ database, values }) {
    if ((values.user === undefined) === (values.client === undefined))
      throw new UsageError('give exactly one of --user and --client');
    const db = database.db;
    // The same revocation as the API's (its lock order, its consent rule), in the user's account.
    if (values.user !== undefined) {
      const id = idOption(values, 'user');
      const user = await operatorUser(db, id);
      if (!user) throw new CommandError(`no user ${id}`);
      return { revoked: await revokeTokens(db, { accountId: user.account_id, userId: id }) };
    }
    const clientId = values.client as string;
    if (!(await findClient(db, clientId))) throw new CommandError(`no client '${clientId}'`);
    return { revoked: await revokeTokens(db, { clientId }) };
  },
};

export const eventsPurge: Command = {
  name: 'events purge',
  summary:
    'Deletes the events and finished webhook deliveries older than EVENTS_RETENTION_DAYS (default 30), as the server does in the background.',
  details: 'Prints {"purged":N,"deliveries":N}: the events and the deliveries removed.',
  async run({ database, config }) {
    const { events, deliveries } = await purgeEvents(database, Date.now(), config.eventsRetentionDays);
    return { purged: events, deliveries };
  },
};
