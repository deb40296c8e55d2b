import { hasLoneSurrogate } from '../../db/text.js';

/**
 * Request bodies may nest at most this deep. Deeper JSON parses, but every recursive walk over
 * it afterwards (schema checks, echoing it back in `failures`, JSON.stringify) can overflow the
 * stack; no item of any collection needs more than a handful of levels.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether JSON text nests arrays/objects deeper than `max`: one linear scan, strings skipped. */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/**
 * Whether parsed JSON holds U+0000 in a string or key. PostgreSQL text cannot store it (the query
 * would fail), so it is refused up front, the same on both dialects. The text test is the fast path.
 */
export function jsonHasNul(text: string, parsed: unknown): boolean {
  return text.includes('\\u0000') && someText(parsed, (s) => s.includes('\0'));
}

/**
 * Whether parsed JSON holds half of a surrogate pair (`"a\ud800b"`) in a string or key: not a
 * character, and each database would store something else (src/db/text.ts). Only a `\u` escape can
 * write one (UTF-8 cannot), so the text test is the fast path.
 */
export function jsonHasLoneSurrogate(text: string, parsed: unknown): boolean {
  return /\\u[dD][89a-fA-F]/.test(text) && someText(parsed, hasLoneSurrogate);
}

/** Whether any string or key of parsed JSON passes `test`. */
function someText(parsed: unknown, test: (s: string) => boolean): boolean {
  const walk = (v: unknown): boolean => {
    if (typeof v === 'string') return test(v);
    if (Array.isArray(v)) return v.some(walk);
    if (v !== null && typeof v === 'object') return Object.entries(v).some(([k, x]) => test(k) || walk(x));
    return false;
  };
  return walk(parsed);
}
