import type { Selectable } from 'kysely';
import type { DB } from '../../db/types.js';
import { accountSecret, hashToken, safeEqual } from '../../auth/secrets.js';
import { ApiError } from '../../errors.js';
import type { Executor } from '../../db/runner.js';
import { clientAddress, companyName, documentToSend, itemsByLinkHash, linkColumns, setLinkColumns } from './queries.js';
import type { ActionAnswer, ActionRequest, Collection } from '../../collections/machinery/collection.js';
import { formatAmount } from '../billing/documents.js';
import { exponentOf } from '../../collections/machinery/money.js';
import { readByIds } from '../../collections/machinery/read.js';
import { NO_ITEMS } from '../../collections/machinery/write/index.js';

/** Where share pages are served (src/http/share/pages.ts): `/share/<collection>/<token>`. */
export const SHARE_PATH = '/share';
/** A link ends 60 days after it was made (PRODUCT §18). */
export const SHARE_DAYS = 60;
const DAY = 86_400_000;

/** The documents a link shares (their page; a quote's decision form). */
export type DocumentTable = 'quotes' | 'invoices';
/** What a link may be made of: a document, or a job (its booking page). */
export type SharedTable = DocumentTable | 'jobs';

/** The member of the answer that shows the link, once: a document's `shareUrl`, a job's `bookingUrl`. */
const URL_MEMBER: Record<SharedTable, string> = { quotes: 'shareUrl', invoices: 'shareUrl', jobs: 'bookingUrl' };
const MAKE_ACTION: Record<SharedTable, string> = { quotes: 'shareLink', invoices: 'shareLink', jobs: 'bookingLink' };

/** A token as made: `<account>.<43 base64url characters>` (256 bits from the CSPRNG). */
const TOKEN = /^(\d{1,10})\.[A-Za-z0-9_-]{43}$/;
/** Compared against when a token is unknown, so a wrong token costs what a right one does. */
const NO_HASH = hashToken('no share link');

/** Whether an item may be shared: not deleted, an invoice not void (jobs have no state). */
const shareable = (row: { deleted: number; state?: string }) => row.deleted === 0 && row.state !== 'void';

async function setLink(
  request: ActionRequest,
  table: SharedTable,
  hash: string | null,
  expires: number | null,
): Promise<Collection> {
  const { caller, item, services } = request;
  const collection = services.registry.get(table)!;
  if (item === undefined)
    throw new ApiError('unknownAction', `this action applies to one item: POST /${table}/:id/${MAKE_ACTION[table]}`);
  const row = await linkColumns(services.database.db, table, caller.accountId, item);
  if (!row) throw new ApiError('itemNotFound');
  if (hash !== null && !shareable(row))
    throw new ApiError(
      'stateForbids',
      `a ${row.deleted ? 'deleted' : row.state} ${table === 'jobs' ? 'job' : 'document'} is not shared`,
    );
  await setLinkColumns(services.database.db, table, caller.accountId, item, hash, expires);
  return collection;
}

const answer = async (request: ActionRequest, collection: Collection) =>
  readByIds(request.services.database.db, collection, request.caller, [request.item!], {
    fields: collection.defaultFields,
    expand: new Map(),
  });

/**
 * `POST /<table>/:id/shareLink` (a job's `bookingLink`): a new link (the old one answers 404 from
 * now on), shown only in this answer as `shareUrl` (a job's `bookingUrl`; never kept for an
 * Idempotency-Key replay); stored only as its hash.
 */
export function shareLinkAction(table: SharedTable) {
  return async (request: ActionRequest): Promise<ActionAnswer> => {
    const { token, url } = shareToken(request.caller.accountId, request.caller.publicUrl, table);
    const collection = await setLink(request, table, hashToken(token), request.caller.now + SHARE_DAYS * DAY);
    const items = await answer(request, collection);
    return {
      status: 200,
      body: { result: 'success', [table]: items, metadata: NO_ITEMS },
      revealed: {
        result: 'success',
        [table]: items.map((i) => ({ ...i, [URL_MEMBER[table]]: url })),
        metadata: NO_ITEMS,
      },
    };
  };
}

/** A fresh token and its URL. */
export function shareToken(accountId: number, publicUrl: string, table: string): { token: string; url: string } {
  const token = accountSecret(accountId);
  return { token, url: `${publicUrl}${SHARE_PATH}/${table}/${token}` };
}

/** `POST /<table>/:id/unshare`: the link answers 404 from now on. */
export function unshareAction(table: SharedTable) {
  return async (request: ActionRequest): Promise<ActionAnswer> => {
    const collection = await setLink(request, table, null, null);
    return { status: 200, body: { result: 'success', [table]: await answer(request, collection), metadata: NO_ITEMS } };
  };
}

/**
 * The document behind a token: its account and id, or undefined (404) for a malformed, wrong,
 * replaced, ended or expired link, a deleted document or job, or a void invoice. Looked up by the token's
 * hash within the account the token names, the hash compared again in constant time. `viewedAt`:
 * a document's first opening (null: not yet, or a job).
 */
export async function findShared<T extends SharedTable>(
  db: Executor,
  table: T,
  token: string,
  now: number,
): Promise<{ accountId: number; id: number; viewedAt: number | null; row: Selectable<DB[T]> } | undefined> {
  const m = TOKEN.exec(token);
  const hash = hashToken(token);
  // The whole row: the page shows it as it was read here (one statement for the link and the item).
  const [row] = m ? await itemsByLinkHash<Selectable<DB[T]> & LinkColumns>(db, table, Number(m[1]), hash) : [];
  const same = safeEqual(hash, row?.share_token_hash ?? NO_HASH);
  if (!row || !same || Number(row.share_expires_at ?? 0) <= now || !shareable(row)) return undefined;
  const viewed = 'viewed_at' in row ? row.viewed_at : null;
  return { accountId: row.account_id, id: row.id, viewedAt: viewed == null ? null : Number(viewed), row };
}

/** The columns of a link every shared table has. */
interface LinkColumns {
  id: number;
  account_id: number;
  deleted: number;
  share_token_hash: string | null;
  share_expires_at: number | string | null;
  state?: string;
  viewed_at?: number | string | null;
}

/** The action docs of both, for a document collection. */
export const shareActionDocs = (noun: string) => ({
  shareLink: {
    on: 'item' as const,
    summary: `Make the ${noun}'s share link`,
    description: `Answers the ${noun} with \`shareUrl\`, shown only in this answer: a page of the ${noun} for the customer, served without a token or cookie, for 60 days. Calling it again replaces the URL (the old one answers 404); \`unshare\`, deleting${noun === 'invoice' ? ', voiding' : ''} end it. Administrators and Employees.`,
  },
  unshare: {
    on: 'item' as const,
    summary: `End the ${noun}'s share link`,
    description: 'The share URL answers 404 from now on.',
  },
  email: {
    on: 'item' as const,
    summary: `E-mail the ${noun} to its client`,
    description: `Makes a share link (replacing the one before) and queues a message with it to the client's e-mail, else its primary contact's; answers \`messages\`. ${noun === 'quote' ? 'A sent quote' : 'An issued or paid invoice'} only (otherwise 422, code 1280); a client without an address: 422, code 1336.`,
    answers: 'messages',
  },
});

/** A job's booking link actions (PRODUCT §18). */
export const bookingActionDocs = {
  bookingLink: {
    on: 'item' as const,
    summary: "Make the job's booking link",
    description:
      "Answers the job with `bookingUrl`, shown only in this answer: a page for the customer, served without a token or cookie, for 60 days, offering the job's slots (`GET /jobs/:id/slots` with its defaults, from now to 14 days ahead); choosing one books it as `POST /jobs/:id/book` does. Calling it again replaces the URL (the old one answers 404); `unshare` and deleting the job end it. A deleted job: 422 (1280). Administrators and Employees; Contractors 403.",
  },
  unshare: {
    on: 'item' as const,
    summary: "End the job's booking link",
    description: 'The booking URL answers 404 from now on. Administrators and Employees; Contractors 403.',
  },
};

/**
 * `POST /<table>/:id/email`: makes a share link (replacing the one before) and queues a message to
 * the client's e-mail (else its primary contact's) with the link; answers `messages`. A document
 * in another state is 1280; a client without an address, 1336.
 */
export function emailAction(table: DocumentTable, states: readonly string[]) {
  const noun = table === 'quotes' ? 'quote' : 'invoice';
  return async (request: ActionRequest): Promise<ActionAnswer> => {
    const { caller, item, services } = request;
    if (item === undefined)
      throw new ApiError('unknownAction', `'email' applies to one ${noun}: POST /${table}/:id/email`);
    const db = services.database.db;
    const row = await documentToSend(db, table, caller.accountId, item);
    if (!row) throw new ApiError('itemNotFound');
    if (row.deleted || !states.includes(row.state))
      throw new ApiError(
        'stateForbids',
        `the ${noun} is ${row.deleted ? 'deleted' : row.state}; 'email' needs ${states.join(' or ')}`,
      );
    const to = await clientAddress(db, caller.accountId, row.client_id);
    if (!to)
      throw new ApiError('generic', `the ${noun}'s client has no e-mail address (nor a primary contact with one)`);
    const company = await companyName(db, caller.accountId);
    const { token, url } = shareToken(caller.accountId, caller.publicUrl, table);
    await setLink(request, table, hashToken(token), caller.now + SHARE_DAYS * DAY);
    const total = `${formatAmount(Number(row.total), exponentOf(row.currency))} ${row.currency}`;
    const what = table === 'quotes' ? 'view it, and accept or decline it' : 'view and download it';
    const out = await services.writer.write({
      collection: services.registry.get('messages')!,
      caller,
      op: 'create',
      input: [
        {
          to,
          subject: `${noun === 'quote' ? 'Quote' : 'Invoice'} ${row.number ?? ''} from ${company}`.slice(0, 200),
          text: `Hello,\n\n${company} sent you ${noun} ${row.number ?? ''} for ${total}. You can ${what} here:\n\n${url}\n\nThe link works for ${SHARE_DAYS} days.\n`,
          client: row.client_id === null ? null : { id: row.client_id },
          job: row.job_id === null ? null : { id: row.job_id },
          [noun]: { id: row.id },
        },
      ],
    });
    if (out.result === 'failure') return { status: 422, body: out };
    return { status: 200, body: { result: 'success', messages: out.items, metadata: out.metadata } };
  };
}
