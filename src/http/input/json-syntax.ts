/**
 * Where JSON text stops being JSON, for the error message of a malformed body. V8's messages
 * give no position for some mistakes and quote the whole body in others, so the failing text is
 * scanned again (error path only; the depth was already limited by json-depth.ts).
 */
export interface JsonSyntaxError {
  /** Offset in the text (UTF-16 units), and the same as line and column, both from 1. */
  offset: number;
  line: number;
  column: number;
  /** What was expected there. */
  expected: string;
}

class Stop {
  constructor(
    readonly at: number,
    readonly expected: string,
  ) {}
}

export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else throw new Stop(i, 'a value (a string, number, object, array, true, false or null)');
  };
  const digits = () => {
    const start = i;
    while (i < text.length && text[i] >= '0' && text[i] <= '9') i++;
    if (i === start) throw new Stop(i, 'a digit');
  };
  const number = () => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits();
    }
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) throw new Stop(i, "a closing '\"' (the string is not terminated)");
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) throw new Stop(i, 'a character other than a control character (escape it, e.g. \\n)');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) throw new Stop(i, 'four hex digits after \\u');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else throw new Stop(i, 'a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Stop(i, 'a property name in double quotes');
        string();
        ws();
        if (text[i] !== ':') throw new Stop(i, "':' after the property name");
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else throw new Stop(i, "',' or '}' after a property value");
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else throw new Stop(i, "',' or ']' after an array element");
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    throw new Stop(i, 'a value (a string, number, object, array, true, false or null)');
  };
  try {
    value();
    ws();
    if (i < text.length) throw new Stop(i, 'the end of the body (only one JSON value is allowed)');
    return undefined;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    return at(text, e.at, e.expected);
  }
}

/** Line and column (from 1) of an offset. */
export function at(text: string, offset: number, expected: string): JsonSyntaxError {
  let line = 1;
  let start = 0;
  for (let k = text.indexOf('\n'); k !== -1 && k < offset; k = text.indexOf('\n', k + 1)) {
    line++;
    start = k + 1;
  }
  return { offset, line, column: offset - start + 1, expected };
}

/** The first byte of a buffer that is not well-formed UTF-8, or -1. */
export function firstInvalidUtf8(buf: Buffer): number {
  // A lossy decode replaces each bad sequence with U+FFFD; re-encoded, the first difference is the first bad byte.
  const again = Buffer.from(buf.toString('utf8'), 'utf8');
  const n = Math.min(buf.length, again.length);
  for (let k = 0; k < n; k++) if (buf[k] !== again[k]) return k;
  return buf.length === again.length ? -1 : n;
}
