import crypto from 'node:crypto';
import type { Database } from '../../db/index.js';
import type { Executor } from '../../db/tx.js';
import { withTransaction } from '../../db/tx.js';
import { query, slot } from '../../db/runner.js';
import { hashToken, randomToken, safeEqual } from '../../auth/secrets.js';
import { ALL_PERMISSIONS, isPermission } from '../../collections/index.js';
import { isAllowedRedirectUri } from './redirect-uri.js';
import { revokeTokens } from '../../auth/tokens.js';

/** A registered OAuth client as the authorization server uses it (never its secret). */
export interface OAuthClient {
  clientId: string;
  name: string;
  redirectUris: string[];
  permissions: string[];
  allowPermissionChoice: boolean;
  certified: boolean;
  revoked: boolean;
  created: number;
  /** A public client (PRODUCT §13): no secret, PKCE required, refresh tokens rotate. */
  public: boolean;
}

type Row = {
  client_id: string;
  name: string;
  redirect_uris: string;
  permissions: string;
  allow_permission_choice: number;
  certified: number;
  revoked: number;
  created: number;
  is_public: number;
};

const toClient = (r: Row): OAuthClient => ({
  clientId: r.client_id,
  name: r.name,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  permissions: JSON.parse(r.permissions) as string[],
  allowPermissionChoice: r.allow_permission_choice === 1,
  certified: r.certified === 1,
  revoked: r.revoked === 1,
  created: Number(r.created),
  public: r.is_public === 1,
});

const COLUMNS = [
  'client_id',
  'name',
  'redirect_uris',
  'permissions',
  'allow_permission_choice',
  'certified',
  'revoked',
  'created',
  'is_public',
] as const;

/** The client's row, by a statement built once per database (every token request asks it). */
const clientRow = (db: Executor, clientId: string) =>
  query<Row & { secret_hash: string }>(
    db,
    'oauth client',
    () =>
      db
        .selectFrom('oauth_clients')
        .select([...COLUMNS, 'secret_hash'])
        .where('client_id', '=', slot('id')),
    { id: clientId },
    { oneRow: true },
  );

export async function findClient(db: Executor, clientId: string): Promise<OAuthClient | undefined> {
  const [row] = await clientRow(db, clientId);
  return row ? toClient(row) : undefined;
}

/**
 * The client when the secret is right; unknown client and wrong secret look the same. A public
 * client has no secret: any secret sent for it is wrong (PRODUCT §13).
 */
export async function authenticateClient(
  db: Executor,
  clientId: string,
  secret: string,
): Promise<OAuthClient | undefined> {
  const [row] = await clientRow(db, clientId);
  const ok = safeEqual(hashToken(secret), row?.secret_hash ?? '');
  return row && ok && row.is_public === 0 ? toClient(row) : undefined;
}

export class ClientError extends Error {}

export interface NewClient {
  name: string;
  redirectUris: string[];
  permissions?: string[];
  allowPermissionChoice?: boolean;
  /** `clients create --public`: a public client, which is given no secret. */
  public?: boolean;
}

export interface RegisteredClient<S extends string | null = string | null> {
  clientId: string;
  clientSecret: S;
  certified: false;
}

/** Registers a client; the secret is returned this once and stored only as a hash (null for a public client). */
export async function registerClient(
  database: Database,
  input: NewClient & { public?: false },
  now?: number,
): Promise<RegisteredClient<string>>;
export async function registerClient(database: Database, input: NewClient, now?: number): Promise<RegisteredClient>;
export async function registerClient(
  database: Database,
  input: NewClient,
  now = Date.now(),
): Promise<RegisteredClient> {
  const name = input.name.trim();
  if (name === '' || name.length > 200) throw new ClientError('--name must be 1 to 200 characters');
  if (input.redirectUris.length === 0) throw new ClientError('at least one --redirect-uri is required');
  const isPublic = input.public === true;
  const bad = input.redirectUris.find((u) => !isAllowedRedirectUri(u, isPublic));
  if (bad !== undefined)
    throw new ClientError(
      `redirect URI '${bad}' must be https (or http on 127.0.0.1/localhost${isPublic ? ', or a private-use scheme with a period such as com.example.app:/callback' : ''}) without a fragment`,
    );
  const permissions = input.permissions ?? [...ALL_PERMISSIONS];
  const unknown = permissions.find((p) => !isPermission(p));
  if (unknown !== undefined)
    throw new ClientError(`unknown permission '${unknown}'; known: ${ALL_PERMISSIONS.join(',')}`);
  if (permissions.length === 0) throw new ClientError('--permissions must name at least one permission');
  const clientId = `fsm_${crypto.randomBytes(12).toString('hex')}`;
  // A public client's stored hash is of a value nobody is ever shown: no secret can match it.
  const clientSecret = randomToken();
  await database.db
    .insertInto('oauth_clients')
    .values({
      client_id: clientId,
      secret_hash: hashToken(clientSecret),
      name,
      redirect_uris: JSON.stringify([...new Set(input.redirectUris)]),
      permissions: JSON.stringify(ALL_PERMISSIONS.filter((p) => permissions.includes(p))),
      allow_permission_choice: input.allowPermissionChoice ? 1 : 0,
      certified: 0,
      revoked: 0,
      created: now,
      is_public: isPublic ? 1 : 0,
    })
    .execute();
  return { clientId, clientSecret: isPublic ? null : clientSecret, certified: false as const };
}

async function setFlag(database: Database, clientId: string, flag: 'certified' | 'revoked'): Promise<void> {
  return withTransaction(database, async (trx) => {
    const r = await trx
      .updateTable('oauth_clients')
      .set({ [flag]: 1 })
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw new ClientError(`no client '${clientId}'`);
    if (flag === 'revoked') await revokeTokens(trx, { clientId });
  });
}

export const certifyClient = (database: Database, clientId: string) => setFlag(database, clientId, 'certified');
/** Revokes the client and every token it holds. */
export const revokeClient = (database: Database, clientId: string) => setFlag(database, clientId, 'revoked');

/** Says who runs a client (null: not stated); the consent page shows it. */
export async function setClientPublisher(db: Executor, clientId: string, publisher: string | null): Promise<void> {
  await db.updateTable('oauth_clients').set({ publisher }).where('client_id', '=', clientId).execute();
}

/** Every client, with who runs it (the operator's list: never a secret or its hash). */
export async function listClients(database: Database): Promise<(OAuthClient & { publisher: string | null })[]> {
  const rows = await database.db
    .selectFrom('oauth_clients')
    .select([...COLUMNS, 'publisher'])
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...toClient(r), publisher: r.publisher }));
}

/** Replaces a confidential client's secret (the old one stops working at once): the new secret, this once. */
export async function rotateClientSecret(database: Database, clientId: string): Promise<string> {
  const found = await database.db
    .selectFrom('oauth_clients')
    .select('is_public')
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (found?.is_public === 1) throw new ClientError(`'${clientId}' is a public client: it has no secret`);
  const clientSecret = randomToken();
  const r = await database.db
    .updateTable('oauth_clients')
    .set({ secret_hash: hashToken(clientSecret) })
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw new ClientError(`no client '${clientId}'`);
  return clientSecret;
}
