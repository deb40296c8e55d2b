/**
 * RFC 8785 JSON Canonicalization Scheme for the values JSON.parse makes (objects, arrays,
 * strings, finite numbers, booleans, null): members sorted by their names' UTF-16 code units,
 * no whitespace, numbers as ECMAScript's Number.prototype.toString (which RFC 8785 §3.2.2.3
 * adopts), strings as JSON.stringify escapes them (RFC 8785 §3.2.2.2: the same escapes). A
 * non-finite number or a lone surrogate has no canonical form: refused (the API refuses both
 * before anything is hashed). Tested against the RFC's own examples (jcs.test.ts).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError('a non-finite number has no canonical JSON');
    return Object.is(value, -0) ? '0' : String(value);
  }
  if (typeof value === 'string') {
    if (/\p{Cs}/u.test(value)) throw new RangeError('a lone surrogate');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    // Default sort compares UTF-16 code units, as RFC 8785 §3.2.3 asks.
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${canonicalJson(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new TypeError(`no JSON form for a ${typeof value}`);
}
