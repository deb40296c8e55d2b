import crypto from 'node:crypto';

export const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/**
 * A parsed JSON value written one way only: object keys sorted (by UTF-16 code units, as RFC 8785
 * orders them), no whitespace, numbers and strings as JSON.stringify writes them. Two bodies that
 * parse to the same value (keys in another order, other spacing, `1.0` for `1`) write the same
 * text. The body's depth is bounded before it gets here (json-depth.ts).
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The digest of a JSON body for an Idempotency-Key's fingerprint: of its canonical form. */
export const jsonDigest = (body: unknown): string => sha256(canonicalJson(body));
