/**
 * Text as both databases store and compare it alike.
 *
 * `~` and `!~` compare lowered text: PostgreSQL's lower() under a UTF-8 locale maps each code point
 * by its simple case mapping (Unicode's UnicodeData), and SQLite's own lower() only ASCII, so SQLite
 * is given `fsm_lower` (src/db/index.ts), this function. JavaScript's toLowerCase() is the same
 * mapping except for two rules it adds: a capital sigma at the end of a word becomes `ς` (lower():
 * `σ`), and `İ` (U+0130) becomes `i̇`, two code points (lower(): `i`). Both are mapped first, so the
 * two databases give the same answers (docs/design.md, "where").
 */
export function lowerText(s: string): string {
  return (/[\u0130\u03a3]/.test(s) ? s.replace(/\u0130/g, 'i').replace(/\u03a3/g, 'σ') : s).toLowerCase();
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether text holds half of a UTF-16 surrogate pair (JSON's `"\ud800"`): no Unicode character, and
 * not storable as UTF-8, so each database would keep something else. Refused on input, as U+0000.
 */
export const hasLoneSurrogate = (s: string): boolean => LONE_SURROGATE.test(s);

/**
 * Text as full-text search compares it (PRODUCT §12, `q`): decomposed (NFKD), combining marks
 * dropped, lowered as `lowerText` lowers. The same function folds the indexed text and the words
 * of `q`, so no database extension (PostgreSQL's `unaccent`) is needed: `Café` and `cafe` are one word.
 */
export function foldText(s: string): string {
  return lowerText(s.normalize('NFKD').replace(/\p{M}+/gu, ''));
}

/** The words of text for search: runs of Unicode letters and digits, folded; anything else separates. */
export function searchWords(s: string): string[] {
  return foldText(s).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The name of a column's trigram index for `~` (migration 140): SQLite's FTS5 table, PostgreSQL's
 * GIN index. The term must have at least `CONTAINS_MIN` characters (code points) for the index to
 * answer: a trigram index knows nothing of shorter text.
 */
export const containsIndexName = (table: string, column: string): string => `${table}_${column}_contains`;
export const CONTAINS_MIN = 3;
