import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { ApiError } from '../../errors.js';
import { canonicalJson } from '../../domain/forms/jcs.js';
import type { Item } from '../machinery/collection.js';
import type { Services } from '../machinery/services.js';
import { readByIds } from '../machinery/read.js';
import { serverCaller } from '../machinery/server-caller.js';
import type { DocumentTable } from '../../domain/customers/share-links.js';
import { lockDocument } from '../../domain/billing/document-queries.js';

/** A signature's PNG: the data URL's bytes, at most 1 MiB. */
export const SIGNATURE_MAX_BYTES = 1024 * 1024;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The lower-case hex SHA-256 of the RFC 8785 canonical JSON of `{lines, subtotal, taxTotal, total}`
 * as the API shows the quote (the same presentation as GET /quotes/:id).
 */
export async function documentSha256(services: Services, accountId: number, id: number): Promise<string> {
  const quotes = services.registry.get('quotes')!;
  const fields = ['lines', 'subtotal', 'taxTotal', 'total'];
  const [item] = await readByIds(services.database.db, quotes, serverCaller(services, accountId, 0), [id], {
    fields,
    expand: new Map(),
  });
  const shown = Object.fromEntries(fields.map((k) => [k, (item as Item)[k]]));
  return crypto.createHash('sha256').update(canonicalJson(shown)).digest('hex');
}

/** The first opening of a link sets `viewedAt`: an event with actor null. */
export async function markViewed(services: Services, table: DocumentTable, accountId: number, id: number, now: number) {
  const collection = services.registry.get(table)!;
  // Every later opening reads, and writes nothing.
  const seen = await services.database.db
    .selectFrom(table)
    .select('viewed_at')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!seen || seen.viewed_at !== null) return;
  await services.writer.transact(serverCaller(services, accountId, now), async (tx, changes) => {
    const row = await lockDocument(tx, table, accountId, id);
    if (!row || row.viewed_at !== null) return;
    await changes.touch(collection, [id]);
    await tx
      .updateTable(table)
      .set({ viewed_at: now, modified: now })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  });
}

/** Why the customer's decision was refused: a message for the page, and its status. */
export class Refused extends Error {
  constructor(
    readonly status: 403 | 409 | 422,
    message: string,
  ) {
    super(message);
  }
}

/** The PNG bytes of a signature data URL, or a refusal saying what is wrong. */
export function signaturePng(dataUrl: string | undefined): Buffer {
  const m = /^data:image\/png;base64,([A-Za-z0-9+/]+={0,2})$/.exec(dataUrl ?? '');
  if (!dataUrl) throw new Refused(422, 'Please draw your signature in the box before accepting.');
  if (!m) throw new Refused(422, 'The signature must be a PNG image drawn in the box.');
  if (m[1].length > Math.ceil(SIGNATURE_MAX_BYTES / 3) * 4 + 4) throw new Refused(422, 'The signature is over 1 MiB.');
  const bytes = Buffer.from(m[1], 'base64');
  if (bytes.length > SIGNATURE_MAX_BYTES) throw new Refused(422, 'The signature is over 1 MiB.');
  if (bytes.length < 33 || !bytes.subarray(0, 8).equals(PNG_MAGIC))
    throw new Refused(422, 'The signature must be a PNG image drawn in the box.');
  return bytes;
}

export interface Decision {
  decision: 'accept' | 'decline';
  /** The quote's version when the page was opened. */
  version: number;
  signerName?: string;
  signature?: string;
  reason?: string;
  ip: string;
  userAgent: string;
}

type Locked = { state: string; deleted: number; version: number; job_id: number | null };

function stillAsShown(row: Locked | undefined, version: number): void {
  if (!row || row.deleted) throw new Refused(409, 'This quote is no longer available.');
  if (row.version !== version)
    throw new Refused(409, 'This quote changed after you opened it. Reload the page to see it as it is now.');
  if (row.state !== 'sent') throw new Refused(409, `This quote is already ${row.state}.`);
}

/**
 * The customer accepts or declines a sent quote on its page: refused (409) when it changed in any
 * member since the page was opened, or is no longer `sent`. Accepting stores the signature as an
 * `image/png` file of the job, then, in one transaction that checks the quote again, makes it
 * `accepted` with its `acceptance`; declining makes it `declined` with its `declineReason`. The
 * changes are events with actor null. A refusal after the file was stored removes the file.
 */
export async function decide(services: Services, accountId: number, id: number, d: Decision, now: number) {
  const caller = serverCaller(services, accountId, now);
  const quotes = services.registry.get('quotes')!;
  const db = services.database.db;
  const current = await db
    .selectFrom('quotes')
    .select(['state', 'deleted', 'version', 'job_id'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  stillAsShown(current, d.version);
  let acceptance: string | null = null;
  let fileId: number | undefined;
  if (d.decision === 'accept') {
    const signerName = (d.signerName ?? '').trim();
    if (!signerName) throw new Refused(422, 'Please type your name.');
    if (signerName.length > 200) throw new Refused(422, 'Your name is over 200 characters.');
    const png = signaturePng(d.signature);
    const sha = await documentSha256(services, accountId, id);
    fileId = await storeSignature(services, accountId, current!.job_id, png, now);
    acceptance = JSON.stringify({
      signerName,
      signature: { id: fileId },
      at: new Date(now).toISOString(),
      ip: d.ip,
      userAgent: d.userAgent.slice(0, 500),
      documentSha256: sha,
    });
  }
  const reason = (d.reason ?? '').trim();
  if (d.decision === 'decline' && reason.length > 2000) throw new Refused(422, 'The reason is over 2,000 characters.');
  try {
    await services.writer.transact(caller, async (tx, changes) => {
      stillAsShown(await lockDocument(tx, 'quotes', accountId, id), d.version);
      await changes.touch(quotes, [id]);
      await tx
        .updateTable('quotes')
        .set(
          d.decision === 'accept'
            ? { state: 'accepted', acceptance, modified: now }
            : { state: 'declined', decline_reason: reason || null, modified: now },
        )
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .execute();
    });
  } catch (err) {
    if (fileId !== undefined) await removeFile(services, accountId, fileId, now).catch(() => {});
    throw err;
  }
}

async function storeSignature(
  services: Services,
  accountId: number,
  job: number | null,
  png: Buffer,
  now: number,
): Promise<number> {
  const staged = await services.blobs.stage(Readable.from([png]), SIGNATURE_MAX_BYTES);
  try {
    const out = await services.writer.write({
      collection: services.registry.get('files')!,
      caller: serverCaller(services, accountId, now),
      op: 'create',
      input: [{ name: 'signature.png', job: job === null ? null : { id: job } }],
      attached: [{ staged, mimeType: 'image/png', name: 'signature.png' }],
    });
    if (out.result === 'failure') throw new ApiError('generic', 'the signature could not be stored');
    return out.items[0].id as number;
  } finally {
    await staged.discard().catch(() => {});
  }
}

async function removeFile(services: Services, accountId: number, id: number, now: number): Promise<void> {
  await services.writer.write({
    collection: services.registry.get('files')!,
    caller: serverCaller(services, accountId, now),
    op: 'delete',
    input: [{ id }],
  });
}
