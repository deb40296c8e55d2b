import {
  certifyClient,
  listClients,
  registerClient,
  revokeClient,
  rotateClientSecret,
  setClientPublisher,
} from '../oauth/grants/clients.js';
import type { Command } from './command.js';
import { UsageError } from './validate.js';

export const clientsCreate: Command = {
  name: 'clients create',
  summary: 'Registers a client application. Its secret is printed this once and stored only as a hash.',
  details:
    'Prints {"clientId":"S","clientSecret":"S","certified":false}. Without --permissions the client asks for every permission.\nA new client is refused until it is certified (clients certify).',
  options: {
    name: { type: 'string', required: true, help: 'the name owners see on the consent page' },
    'redirect-uri': {
      type: 'string',
      value: 'URI',
      multiple: true,
      required: true,
      help: 'https, or http on 127.0.0.1/localhost; repeat for several',
    },
    permissions: { type: 'string', value: 'p,q', help: 'comma-separated, e.g. jobs.read,jobs.write' },
    'allow-permission-choice': { type: 'boolean', help: 'owners may untick permissions on the consent page' },
    publisher: { type: 'string', help: 'who runs the application, shown to owners beside its name' },
    public: {
      type: 'boolean',
      help: 'a public client (mobile or desktop app): no secret, PKCE required, refresh tokens rotate; prints clientSecret null',
    },
  },
  async run({ database, values }) {
    const publisher = (values.publisher as string | undefined)?.trim();
    if (publisher !== undefined && (publisher === '' || publisher.length > 200))
      throw new UsageError('--publisher must be 1 to 200 characters');
    const out = await registerClient(database, {
      name: values.name as string,
      redirectUris: (values['redirect-uri'] as string[] | undefined) ?? [],
      permissions: (values.permissions as string | undefined)
        ?.split(',')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
      allowPermissionChoice: (values['allow-permission-choice'] as boolean | undefined) ?? false,
      public: (values.public as boolean | undefined) ?? false,
    });
    if (publisher !== undefined) await setClientPublisher(database.db, out.clientId, publisher);
    return out;
  },
};

export const clientsCertify: Command = {
  name: 'clients certify',
  summary: 'Certifies a client (the operator vouches for it): from now on owners may grant it access.',
  positionals: ['CLIENT_ID'],
  async run({ database, positionals: [clientId] }) {
    await certifyClient(database, clientId);
    return { clientId, certified: true };
  },
};

export const clientsRevoke: Command = {
  name: 'clients revoke',
  summary: 'Revokes a client and every token it holds.',
  positionals: ['CLIENT_ID'],
  async run({ database, positionals: [clientId] }) {
    await revokeClient(database, clientId);
    return { clientId, revoked: true };
  },
};

/** Only what an operator needs to see: never a secret or its hash. */
export const clientsList: Command = {
  name: 'clients list',
  summary: 'Lists the client applications (never their secrets).',
  async run({ database }) {
    return (await listClients(database)).map((c) => ({ ...c, created: new Date(c.created).toISOString() }));
  },
};

export const clientsRotateSecret: Command = {
  name: 'clients rotate-secret',
  summary: "Replaces a client's secret; the old one stops working at once. The new secret is printed this once.",
  details: 'Prints {"clientId":"S","clientSecret":"S"}. Tokens already issued stay valid.',
  positionals: ['CLIENT_ID'],
  async run({ database, positionals: [clientId] }) {
    const clientSecret = await rotateClientSecret(database, clientId);
    return { clientId, clientSecret };
  },
};
