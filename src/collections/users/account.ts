import { Readable } from 'node:stream';
import { Value } from '@sinclair/typebox/value';
import type { Updateable } from 'kysely';
import type { Executor } from '../../db/runner.js';
import type { AccountsTable } from '../../db/types.js';
import { ApiError, validationError, type ApiErrorBody } from '../../errors.js';
import type { BlobStore } from '../../storage/blobs.js';
import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { ACCOUNT_DOCUMENT_FIELDS, ACCOUNT_MEMBERS, isItemId } from '../machinery/fields.js';
import { readByIds } from '../machinery/read.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { logoFile } from '../../domain/billing/document-queries.js';
import { setAccountColumns } from './repository.js';

/**
 * `POST /users/account` (issue 50): an Administrator sets what the account's quotes and invoices
 * print of the business, the members of `account` declared by ACCOUNT_DOCUMENT_FIELDS (address,
 * phone, email, taxNumber, logo, paymentTerms, bankDetails, paperSize). The body is
 * `{"account": {...}}`: the members sent are set (null clears one), the others kept. Everyone reads
 * them as members of `account` (`fields=*,[*]`, `fields=account.phone`). A failure names
 * `account.<member>` (`account.address.country`), in the failure envelope; nothing is written.
 */
export async function setAccount(request: ActionRequest): Promise<ActionAnswer> {
  const { caller, services, body } = request;
  if (request.item !== undefined)
    throw new ApiError('unknownAction', "'account' applies to the caller's account: POST /users/account");
  if (body instanceof Readable) throw new ApiError('unsupportedMediaType');
  const input = (body as { account?: unknown } | null)?.account;
  const errors: ApiErrorBody[] = [];
  const set: Updateable<AccountsTable> = {};
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    errors.push(validationError('notAnObject', 'account'));
  else if (Object.keys(body).some((k) => k !== 'account'))
    for (const k of Object.keys(body).filter((k) => k !== 'account'))
      errors.push(validationError('unknown', k.slice(0, 64)));
  if (!errors.length) {
    if (input === undefined) errors.push(validationError('required', 'account'));
    else if (input === null || typeof input !== 'object' || Array.isArray(input))
      errors.push(validationError('invalid', 'account', 'must be an object of the members to set'));
    else
      await check(
        input as Record<string, unknown>,
        errors,
        set,
        caller.accountId,
        services.database.db,
        services.blobs,
      );
  }
  if (errors.length)
    return {
      status: 422,
      body: {
        result: 'failure',
        failures: [{ rawData: input ?? body ?? null, errors }],
        metadata: { receivedItemsCount: 1, validItems: [], invalidItems: [0] },
      },
    };
  if (Object.keys(set).length)
    await services.writer.transact(caller, (tx) => setAccountColumns(tx, caller.accountId, set, caller.now));
  const users = services.registry.get('users')!;
  const items = await readByIds(services.database.db, users, caller, [caller.userId], {
    fields: users.defaultFields,
    expand: new Map([['account', '*']]),
  });
  return { status: 200, body: { result: 'success', users: items, metadata: NO_ITEMS } };
}

const ADDRESS_MEMBERS: Record<string, number> = {
  line1: 200,
  line2: 200,
  city: 100,
  region: 100,
  postcode: 20,
  country: 100,
};

/** Checks each member sent, collecting failures named `account.<member>`, and the columns to set. */
async function check(
  input: Record<string, unknown>,
  errors: ApiErrorBody[],
  set: Record<string, unknown>,
  accountId: number,
  db: Executor,
  blobs: BlobStore,
): Promise<void> {
  for (const [name, value] of Object.entries(input)) {
    const field = ACCOUNT_DOCUMENT_FIELDS[name];
    const path = `account.${name.slice(0, 64)}`;
    if (!field) {
      // The account's other members (its currency, its company name…) are set when it is made.
      const known = name === 'id' || (ACCOUNT_MEMBERS as readonly string[]).includes(name);
      errors.push(validationError(known ? 'readOnly' : 'unknown', path));
      continue;
    }
    if (value === null) {
      set[field.column] = null;
      continue;
    }
    if (name === 'address') {
      const before = errors.length;
      if (typeof value !== 'object' || Array.isArray(value)) {
        errors.push(
          validationError(
            'invalid',
            path,
            'must be an object of line1, line2, city, region, postcode, country, or null',
          ),
        );
        continue;
      }
      const address: Record<string, string | null> = {};
      for (const [m, v] of Object.entries(value as Record<string, unknown>)) {
        const max = ADDRESS_MEMBERS[m];
        if (max === undefined) errors.push(validationError('unknown', `${path}.${m.slice(0, 64)}`));
        else if (v !== null && typeof v !== 'string')
          errors.push(validationError('invalid', `${path}.${m}`, 'must be a string or null'));
        else if (typeof v === 'string' && v.length > max)
          errors.push(validationError('invalid', `${path}.${m}`, `at most ${max} characters`));
        else if (typeof v === 'string' && v.trim()) address[m] = v.trim();
      }
      if (errors.length === before) set[field.column] = Object.keys(address).length ? JSON.stringify(address) : null;
      continue;
    }
    if (name === 'logo') {
      const id = (value as { id?: unknown }).id;
      if (
        typeof value !== 'object' ||
        Array.isArray(value) ||
        Object.keys(value).some((k) => k !== 'id') ||
        !isItemId(id)
      ) {
        errors.push(validationError('association', path));
        continue;
      }
      const problem = await logoProblem(db, blobs, accountId, id);
      if (problem === 'missing') errors.push(validationError('reference', path));
      else if (problem) errors.push(validationError('invalid', path, problem));
      else set[field.column] = JSON.stringify({ id });
      continue;
    }
    if (!Value.Check(field.valueSchema, value)) {
      const first = [...Value.Errors(field.valueSchema, value)][0];
      errors.push(validationError('invalid', path, first ? first.message.toLowerCase() : 'not a valid value'));
      continue;
    }
    set[field.column] = typeof value === 'string' ? value.trim() || null : value;
  }
}

/** PNG's and JPEG's first bytes: a logo must be one of these whatever its declared type says. */
const IMAGE_MAGIC = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from([0xff, 0xd8, 0xff])];

/** Why a `files` item cannot be the account's logo ('missing' when the account has no such item). */
async function logoProblem(db: Executor, blobs: BlobStore, accountId: number, id: number): Promise<string | undefined> {
  const row = await logoFile(db, accountId, id);
  if (!row || row.deleted) return 'missing';
  const head = await logoHead(blobs, row.sha256);
  if (!head) return 'the file has no stored bytes';
  if (!IMAGE_MAGIC.some((m) => head.subarray(0, m.length).equals(m))) return 'the file is not a PNG or JPEG image';
  return undefined;
}

/** The first bytes of a stored blob (enough for its magic number), or undefined when it is gone. */
async function logoHead(blobs: BlobStore, sha256: string): Promise<Buffer | undefined> {
  const opened = await blobs.open(sha256);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of opened.stream) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= 8) break;
    }
  } finally {
    opened.stream.destroy();
  }
  return Buffer.concat(chunks);
}

export const accountActionDocs: Record<string, ActionDoc> = {
  account: {
    on: 'collection',
    summary: "Set the account's business details (Administrators)",
    description:
      "Body `{\"account\": {…}}` with any of `address` (as a client's, without location), `phone`, `email`, `taxNumber`, `logo {id}` (a PNG or JPEG `files` item of the account), `paymentTerms`, `bankDetails`, `paperSize` (`A4` | `Letter`; null: Letter for an address in the US or Canada, A4 elsewhere): the members sent are set (null clears one), the others kept. They are what quotes and invoices print of the business, and every item's `account` shows them with `[*]`. Answers the caller's user (default fields) with `account` in full. Administrators only (403, 1021); a failure names `account.<member>` (422).",
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              account: {
                type: 'object',
                properties: Object.fromEntries(
                  Object.entries(ACCOUNT_DOCUMENT_FIELDS).map(([k, f]) => [k, JSON.parse(JSON.stringify(f.schema))]),
                ),
                additionalProperties: false,
              },
            },
            required: ['account'],
            additionalProperties: false,
          },
        },
      },
    },
  },
};
