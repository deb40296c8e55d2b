import { hasLoneSurrogate } from '../../db/text.js';
import { ApiError } from '../../errors.js';

/**
 * The `where` modifier: `term (and|or term)*` with parentheses, `and` binding tighter than `or`.
 * A term is `field op value`. The parser builds a tree; values are bound as parameters later.
 */
/** The comparison operators (PRODUCT §3), written once: the SDK's `Operator`, README and OpenAPI are pinned to it. */
export const CMP_OPS = ['~', '!~', '=', '!=', '<', '<=', '>', '>='] as const;
export type CmpOp = (typeof CMP_OPS)[number];
/** An operator at the start of the text, the longest first (`<=` before `<`). */
const OP_AT = new RegExp(
  `^(${[...CMP_OPS]
    .sort((x, y) => y.length - x.length)
    .map((o) => o.replace(/[~!<>=]/g, '\\$&'))
    .join('|')})`,
);
export type Value = string | number | boolean | null;
export type WhereNode =
  { type: 'and' | 'or'; left: WhereNode; right: WhereNode } | { type: 'cmp'; field: string; op: CmpOp; value: Value };

/** The fields a `where` tree compares, left to right. */
export function fieldsIn(node: WhereNode | undefined): string[] {
  if (!node) return [];
  return node.type === 'cmp' ? [node.field] : [...fieldsIn(node.left), ...fieldsIn(node.right)];
}

const MAX_LENGTH = 4000;
const MAX_DEPTH = 32;
const MAX_TERMS = 64;

/** Each token knows where it starts (`at`, from 0), so errors can show where parsing stopped. */
type Token = (
  { t: 'field'; v: string } | { t: 'op'; v: CmpOp } | { t: 'value'; v: Value } | { t: 'and' | 'or' | '(' | ')' }
) & { at?: number };

const bad = (why: string) => new ApiError('badModifier', `where: ${why}`);
const VALUES = 'values are quoted strings ("…" or \'…\'), numbers, true, false or null';
/** `at position N: 'rest of the text…'`: where the parser stopped, as the client wrote it. */
const stoppedAt = (src: string, at: number) =>
  at >= src.length
    ? 'at the end'
    : `at position ${at + 1}: '${src.slice(at, at + 20)}${src.length > at + 20 ? '…' : ''}'`;

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '(' || c === ')') {
      out.push({ t: c, at: i });
      i++;
      continue;
    }
    const op = OP_AT.exec(src.slice(i, i + 2));
    if (op) {
      out.push({ t: 'op', v: op[1] as CmpOp, at: i });
      i += op[1].length;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\' && j + 1 < src.length) j++;
        s += src[j];
        j++;
      }
      if (j >= src.length) throw bad(`unterminated string starting at position ${i + 1}; close it with ${c}`);
      // PostgreSQL text cannot hold U+0000: refused here, the same on both dialects.
      if (s.includes('\0')) throw bad('strings must not contain U+0000');
      // Nor half of a surrogate pair: no character, stored differently by each database.
      if (hasLoneSurrogate(s)) throw bad('strings must not contain a lone surrogate (U+D800 to U+DFFF outside a pair)');
      out.push({ t: 'value', v: s, at: i });
      i = j + 1;
      continue;
    }
    const num = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(src.slice(i));
    if (num) {
      const n = Number(num[0]);
      if (!Number.isFinite(n)) throw bad(`number out of range ${stoppedAt(src, i)}`);
      out.push({ t: 'value', v: n, at: i });
      i += num[0].length;
      continue;
    }
    const word = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)?/.exec(src.slice(i));
    if (word) {
      const w = word[0];
      const lw = w.toLowerCase();
      if (lw === 'and' || lw === 'or') out.push({ t: lw, at: i });
      else if (w === 'true' || w === 'false') out.push({ t: 'value', v: w === 'true', at: i });
      else if (w === 'null') out.push({ t: 'value', v: null, at: i });
      else out.push({ t: 'field', v: w, at: i });
      i += w.length;
      continue;
    }
    throw bad(
      `unexpected character ${stoppedAt(src, i)}; a term is field op value, ops ~ !~ = != < <= > >=, ${VALUES}`,
    );
  }
  return out;
}

export function parseWhere(src: string): WhereNode {
  if (src.length > MAX_LENGTH) throw bad('expression too long');
  const tokens = tokenize(src);
  let pos = 0;
  let terms = 0;
  const peek = () => tokens[pos];
  const here = (k: number) => stoppedAt(src, tokens[k]?.at ?? src.length);

  function expr(depth: number): WhereNode {
    if (depth > MAX_DEPTH) throw bad('too deeply nested');
    let left = conj(depth);
    while (peek()?.t === 'or') {
      pos++;
      left = { type: 'or', left, right: conj(depth) };
    }
    return left;
  }
  function conj(depth: number): WhereNode {
    let left = primary(depth);
    while (peek()?.t === 'and') {
      pos++;
      left = { type: 'and', left, right: primary(depth) };
    }
    return left;
  }
  function primary(depth: number): WhereNode {
    const tok = tokens[pos++];
    if (!tok) throw bad('unexpected end of expression; expected a term: field op value');
    if (tok.t === '(') {
      const inner = expr(depth + 1);
      if (tokens[pos++]?.t !== ')') throw bad(`missing ')' ${here(pos - 1)}`);
      return inner;
    }
    if (tok.t !== 'field') throw bad(`expected a field name ${here(pos - 1)}`);
    const op = tokens[pos++];
    if (op?.t !== 'op') throw bad(`expected an operator after '${tok.v}' (~ !~ = != < <= > >=) ${here(pos - 1)}`);
    const value = tokens[pos++];
    if (value?.t !== 'value') {
      const hint =
        value?.t === 'op' && op.v === '=' && value.v === '='
          ? " ('=' compares; there is no '==')"
          : value?.t === 'field'
            ? ` (text must be quoted: "${value.v}")`
            : '';
      throw bad(`expected a value after '${tok.v} ${op.v}' ${here(pos - 1)}${hint}; ${VALUES}`);
    }
    if (++terms > MAX_TERMS) throw bad('too many terms');
    return { type: 'cmp', field: tok.v, op: op.v, value: value.v };
  }

  if (tokens.length === 0) throw bad('empty expression');
  const tree = expr(0);
  if (pos !== tokens.length)
    throw bad(`unexpected text after a complete expression ${here(pos)}; join terms with and / or`);
  return tree;
}
