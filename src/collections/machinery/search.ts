import { searchWords } from '../../db/text.js';
import { ApiError } from '../../errors.js';
import type { Collection } from './collection.js';
import type { Batch } from './write/batch.js';

/**
 * `q` (PRODUCT §12): the searched text of an item, written with its row as `search_text` (folded
 * words, src/db/text.ts) and indexed by the dialect (migration 070), and the words of a query.
 */
/** The columns a collection's `q` reads: each searched field's column, an object's members'. */
export function searchColumns(c: Collection): string[] {
  return (c.search ?? []).flatMap((name) => {
    const f = c.fields[name];
    if (f?.kind === 'scalar') return [f.column];
    if (f?.kind === 'object') return Object.values(f.members).map((m) => m.column);
    throw new Error(`${c.name}: search names '${name}', which is no text field`);
  });
}

/** An item's searched text: the folded words of its searched columns and text custom fields. */
export function searchTextOf(c: Collection, row: Record<string, unknown>, custom?: string[]): string {
  const words: string[] = [];
  for (const col of searchColumns(c)) if (typeof row[col] === 'string') words.push(...searchWords(row[col] as string));
  for (const text of custom ?? []) words.push(...searchWords(text));
  return words.join(' ');
}

/**
 * Once the collection's `fill` has set its columns (a job's generated reference), just before the
 * row is written: the item's searched text, when what it is made of changes.
 */
export function fillSearchText(b: Batch, i: number): void {
  const texts = b.custom?.texts[i];
  if (!texts) return;
  const c = b.request.collection;
  b.rows[i].search_text = searchTextOf(c, { ...(b.existing[i] ?? {}), ...b.rows[i] }, texts);
}

/** The words of `q` (PRODUCT §12): at most this many distinct words, each cut to this length. */
export const MAX_SEARCH_WORDS = 32;
const MAX_WORD = 200;

/** `q` as words: no syntax reaches the search engine; a `q` of no word does not filter. */
export function parseSearch(c: Collection, raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  if (!c.search) throw new ApiError('badModifier', `q: ${c.name} cannot be searched`);
  const words = [...new Set(searchWords(String(raw)).map((w) => [...w].slice(0, MAX_WORD).join('')))];
  if (words.length > MAX_SEARCH_WORDS) throw new ApiError('badModifier', `q: at most ${MAX_SEARCH_WORDS} words`);
  return words;
}
