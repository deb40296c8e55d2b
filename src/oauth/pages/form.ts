import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import { badPercentEncoding } from '../../http/input/url-encoding.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export type FormBody = Record<string, string | string[]>;

export const FORM_BODY_LIMIT = 64 * 1024;

/** application/x-www-form-urlencoded into a null-prototype object; a repeated name becomes an array. */
export function parseForm(text: string): FormBody {
  const out: FormBody = Object.create(null);
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/**
 * The body parsers of the /oauth2 context: forms, and any other body read (within the limit) and
 * dropped, so the endpoints answer a wrong content type in their own format.
 */
export function registerFormParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  // Read as bytes: malformed UTF-8 or percent-escapes are refused (400), never turned into U+FFFD.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT },
    (_req, body, done) => {
      let text: string;
      try {
        text = utf8.decode(body as Buffer);
      } catch {
        return done(new ApiError('badEncoding', 'the form body is not UTF-8'), undefined);
      }
      const bad = badPercentEncoding(text);
      if (bad) return done(new ApiError('badEncoding', `the form body: ${bad}`), undefined);
      done(null, parseForm(text));
    },
  );
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT }, (_req, _body, done) =>
    done(null, undefined),
  );
}

/** One value of a form or query parameter; a repeated or missing one is undefined. */
export function single(source: unknown, name: string): string | undefined {
  const v = (source as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
}

/** Every value of a parameter (checkbox groups). */
export function all(source: unknown, name: string): string[] {
  const v = (source as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
