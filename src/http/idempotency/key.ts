import { ApiError } from '../../errors.js';

/** Printable ASCII, as the IETF draft's sf-string allows: space to tilde. */
const BARE = /^[\x20-\x7e]{1,255}$/;
/** The quoted form: `"…"`, with `\"` and `\\` as the only escapes (an sf-string). */
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * The `Idempotency-Key` of a request: undefined without one; the key itself (unquoted) when it is
 * 1–255 printable ASCII characters; anything else (empty, too long, control or non-ASCII
 * characters, the header sent twice) is a 400.
 */
export function parseIdempotencyKey(raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new ApiError('idempotencyKeyInvalid', 'sent more than once');
  const quoted = QUOTED.exec(raw);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : raw;
  if (!BARE.test(key) || (!quoted && raw.startsWith('"'))) throw new ApiError('idempotencyKeyInvalid');
  return key;
}
