import type { Readable } from 'node:stream';
import { ApiError } from '../../errors.js';
import { StoreUnavailableError } from '../../storage/blobs.js';
import type { Services } from '../machinery/services.js';
import { checkLink, signingKey } from './links.js';
import { storeUnavailable } from './upload.js';

/** What a signed download link serves. */
export interface Download {
  name: string;
  mimeType: string;
  size: number;
  stream: Readable;
}

const ID = /^[1-9]\d{0,14}$/;

/**
 * The bytes a signed link names (`{account}/{id}?expires=…&signature=…`), once its signature (in
 * constant time) and expiry hold: no bearer token, no X-Version; the signature is the credential.
 * A genuine link to a file deleted since is "not found".
 */
export async function openDownload(
  services: Services,
  link: { account: string; id: string; expires: unknown; signature: unknown },
  now: number,
): Promise<Download> {
  if (!ID.test(link.account) || !ID.test(link.id)) throw new ApiError('notFound');
  if (typeof link.expires !== 'string' || typeof link.signature !== 'string') throw new ApiError('linkInvalid');
  const [account, id] = [Number(link.account), Number(link.id)];
  const db = services.database.db;
  const check = checkLink(await signingKey(db), account, id, link.expires, link.signature, now);
  if (check === 'invalid') throw new ApiError('linkInvalid');
  if (check === 'expired') throw new ApiError('linkExpired');
  const row = await db
    .selectFrom('files')
    .select(['name', 'mime_type', 'sha256'])
    .where('account_id', '=', account)
    .where('id', '=', id)
    .executeTakeFirst();
  const blob =
    row &&
    (await services.blobs.open(row.sha256).catch((err) => {
      throw err instanceof StoreUnavailableError ? storeUnavailable(err) : err;
    }));
  if (!row || !blob) throw new ApiError('itemNotFound');
  return { name: row.name, mimeType: row.mime_type, size: blob.size, stream: blob.stream };
}
