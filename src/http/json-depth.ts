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
