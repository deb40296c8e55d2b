import crypto from 'node:crypto';
import type { Executor } from '../../db/tx.js';

/** How long a download link stays valid after the item was read. */
export const LINK_TTL_SECONDS = 15 * 60;
/** Outside the `/:collection[/:item][/:action]` space: the hyphen is not in `[A-z]+`. */
export const DOWNLOAD_PREFIX = '/file-downloads';

/** The per-installation secret from migration 001, shared by every worker through the database. */
export async function signingKey(db: Executor): Promise<Buffer> {
  const row = await db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', 'signing_key')
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'hex');
}

// The prefix separates these signatures from anything else the same key may ever sign.
function mac(key: Buffer, accountId: number, id: number, expires: number): Buffer {
  return crypto.createHmac('sha256', key).update(`file-download\n${accountId}\n${id}\n${expires}`).digest();
}

/** `{publicUrl}/file-downloads/{account}/{id}?expires={unix seconds}&signature={base64url}`. */
export function downloadLink(key: Buffer, publicUrl: string, accountId: number, id: number, nowMs: number): string {
  const expires = Math.floor(nowMs / 1000) + LINK_TTL_SECONDS;
  const signature = mac(key, accountId, id, expires).toString('base64url');
  return `${publicUrl}${DOWNLOAD_PREFIX}/${accountId}/${id}?expires=${expires}&signature=${signature}`;
}

export type LinkCheck = 'ok' | 'invalid' | 'expired';

/** Signature first (constant time), then expiry: an expired link is only reported as such when genuine. */
export function checkLink(
  key: Buffer,
  accountId: number,
  id: number,
  expires: string,
  signature: string,
  nowMs: number,
): LinkCheck {
  if (!/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'invalid';
  const expected = mac(key, accountId, id, Number(expires));
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return 'invalid';
  return Number(expires) * 1000 <= nowMs ? 'expired' : 'ok';
}
