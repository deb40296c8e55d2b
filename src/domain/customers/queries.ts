import { sql } from 'kysely';
import { query, slot, untyped, type Executor } from '../../db/runner.js';
import type { DocumentTable, SharedTable } from './share-links.js';

/** The customers domain's queries: share links, who a message goes to, in whose name. */

/** The link's columns of an item, and a document's state. */
export const linkColumns = (db: Executor, table: SharedTable, accountId: number, id: number) =>
  db
    .selectFrom(table)
    .select(['id', 'account_id', 'deleted', 'share_token_hash', 'share_expires_at'])
    .$if(table !== 'jobs', (qb) =>
      qb.select([sql<string>`state`.as('state'), sql<number | null>`viewed_at`.as('viewed_at')]),
    )
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();

/** An item's link: the token's hash and when it ends (both null: not shared). */
export async function setLinkColumns(
  db: Executor,
  table: SharedTable,
  accountId: number,
  id: number,
  hash: string | null,
  expires: number | null,
): Promise<void> {
  await db
    .updateTable(table)
    .set({ share_token_hash: hash, share_expires_at: expires })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .execute();
}

/** The whole row of the account's item whose link has this hash (a statement built once per table). */
export const itemsByLinkHash = <R>(db: Executor, table: SharedTable, accountId: number, hash: string) =>
  query<R>(
    db,
    `findShared|${table}`,
    () =>
      untyped(db)
        .selectFrom(table)
        .selectAll()
        .where('account_id', '=', slot<number>('account'))
        .where('share_token_hash', '=', slot('hash')),
    { account: accountId, hash },
    { oneRow: true },
  );

/** What the e-mail of a document says of it. */
export const documentToSend = (db: Executor, table: DocumentTable, accountId: number, id: number) =>
  db
    .selectFrom(table)
    .select(['id', 'state', 'deleted', 'number', 'client_id', 'job_id', 'total', 'currency'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();

/** The address a client's messages go to: its own e-mail, else its primary contact's. */
export async function clientAddress(
  db: Executor,
  accountId: number,
  clientId: number | null,
): Promise<string | undefined> {
  if (clientId === null) return undefined;
  const client = await db
    .selectFrom('clients')
    .select('email')
    .where('account_id', '=', accountId)
    .where('id', '=', clientId)
    .executeTakeFirst();
  if (client?.email) return client.email;
  const contact = await db
    .selectFrom('contacts')
    .select('email')
    .where('account_id', '=', accountId)
    .where('client_id', '=', clientId)
    .where('is_primary', '=', 1)
    .where('email', 'is not', null)
    .executeTakeFirst();
  return contact?.email ?? undefined;
}

/** The business's name, as its messages sign. */
export async function companyName(db: Executor, accountId: number): Promise<string> {
  const row = await db
    .selectFrom('accounts')
    .select('company_name')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return row.company_name;
}

/** The first name a message gives of the user coming (null when unset), or undefined: no such user. */
export async function firstNameOf(db: Executor, accountId: number, id: number): Promise<string | null | undefined> {
  const row = await db
    .selectFrom('users')
    .select('first_name')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.first_name;
}
