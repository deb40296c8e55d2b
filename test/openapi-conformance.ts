import { AssertionError } from 'node:assert';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

/**
 * Every response the HTTP tests receive is checked against the served `/openapi.json`: the
 * status is declared for the operation, the headers the document requires are there (and the
 * four JSON headers of spec §1.7 on JSON answers), and the body matches the declared schema.
 * createTestApp wraps `app.inject` with it, so a difference between the answers and the
 * document fails whichever test met it.
 */
type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

export interface Exchange {
  method: string;
  url: string;
  requestHeaders: Record<string, unknown>;
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

const METHODS = ['GET', 'POST', 'PATCH', 'DELETE'];
/** Spec §4.1's URL form: what the API dispatcher answers (the auth pages are not operations). */
const API_FORM = /^\/[A-Za-z]+(\/[0-9]+)?(\/[A-Za-z]+)?\/?$/;
const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class Conformance {
  private readonly ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly paths: { template: string; re: RegExp; static: boolean }[];
  /** How many responses were checked (for a diagnostic). */
  checked = 0;

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc, 'openapi.json');
    this.paths = Object.keys(doc.paths).map((template) => ({
      template,
      re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
      static: !template.includes('{'),
    }));
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (!v) this.compiled.set(pointer, (v = this.ajv.compile({ $ref: `openapi.json#${pointer}` })));
    return v;
  }

  private at(pointer: string): Json | undefined {
    return pointer
      .split('/')
      .slice(1)
      .reduce<Json | undefined>((o, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
  }

  /** The document's response object for this exchange (its pointer), following one `$ref`. */
  private responseFor(x: Exchange): { pointer: string; declared: boolean } {
    const path = x.url.split('?')[0];
    const found = this.paths.find((p) => p.static && p.re.test(path)) ?? this.paths.find((p) => p.re.test(path));
    const override =
      typeof x.requestHeaders['x-method'] === 'string' ? x.requestHeaders['x-method'].trim().toUpperCase() : undefined;
    const method = (override && METHODS.includes(override) ? override : x.method).toLowerCase();
    const opPointer = found ? `/paths/${esc(found.template)}/${method}` : undefined;
    const op = opPointer ? this.at(opPointer) : undefined;
    if (!op) return { pointer: '', declared: false };
    const status = String(x.status);
    const key = op.responses?.[status]
      ? status
      : op.responses?.[`${status[0]}XX`]
        ? `${status[0]}XX`
        : op.responses?.default
          ? 'default'
          : undefined;
    if (!key)
      throw this.fail(
        x,
        `status ${status} is not declared for ${method.toUpperCase()} ${found!.template} (declared: ${Object.keys(op.responses ?? {}).join(', ')})`,
      );
    let pointer = `${opPointer}/responses/${key}`;
    const ref = this.at(pointer)?.$ref as string | undefined;
    if (ref) pointer = ref.slice(1);
    return { pointer, declared: true };
  }

  private fail(x: Exchange, why: string): AssertionError {
    return new AssertionError({
      message: `response does not match /openapi.json: ${x.method} ${x.url.slice(0, 200)} -> ${x.status}: ${why}\nbody: ${x.body.slice(0, 500)}`,
    });
  }

  check(x: Exchange): void {
    this.checked++;
    const type = String(x.headers['content-type'] ?? '');
    const isJson = type.startsWith('application/json');
    // Spec §1.7 on every JSON answer; PRODUCT §3 on 405, 401 and 429.
    if (isJson) {
      const want = {
        'content-type': 'application/json;charset=UTF-8',
        'cache-control': undefined,
        pragma: 'no-cache',
        'x-version': '1.0',
      };
      for (const [h, v] of Object.entries(want)) {
        if (x.headers[h] === undefined || (v !== undefined && x.headers[h] !== v))
          throw this.fail(x, `header ${h} is ${x.headers[h]}, expected ${v ?? 'present'}`);
      }
    }
    if (x.status === 405 && !x.headers.allow) throw this.fail(x, 'a 405 without Allow');
    if (isJson && x.status === 429 && !x.headers['retry-after']) throw this.fail(x, 'a 429 without Retry-After');
    if (isJson && x.status === 401 && !x.headers['www-authenticate'])
      throw this.fail(x, 'a 401 without WWW-Authenticate');

    const { pointer, declared } = this.responseFor(x);
    if (!declared) {
      // Not an operation of the document (an unknown collection, another method, a page): a JSON
      // answer must still be the error envelope.
      if (isJson && API_FORM.test(x.url.split('?')[0])) this.body(x, '/components/schemas/ErrorEnvelope');
      return;
    }
    const response = this.at(pointer) ?? {};
    for (const [name, h] of Object.entries<Json>(response.headers ?? {})) {
      const header = h.$ref ? this.at(h.$ref.slice(1))! : h;
      const value = x.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) throw this.fail(x, `required header ${name} is missing`);
        continue;
      }
      if (header.schema && !this.ajv.validate(header.schema, String(value)))
        throw this.fail(x, `header ${name}: ${this.ajv.errorsText()}`);
    }
    const content = response.content as Json | undefined;
    if (!content) {
      if (x.body.length && x.status !== 302 && x.status !== 303 && x.status !== 304)
        throw this.fail(x, 'a body where the document declares none');
      return;
    }
    const base = type.split(';')[0].trim();
    const media = Object.hasOwn(content, base) ? base : Object.hasOwn(content, '*/*') ? '*/*' : undefined;
    if (!media)
      throw this.fail(x, `content type ${type} is not declared (declared: ${Object.keys(content).join(', ')})`);
    if (media === 'application/json' && content[media].schema) {
      this.body(x, `${pointer}/content/${esc(media)}/schema`);
      this.defaults(x, content[media].schema.$ref);
    }
  }

  /**
   * A read without `fields` answers every default field of each item: its items are checked
   * against the `<Collection>Default` schema the document publishes for that (the typed client's
   * items rely on it), which a list's schema cannot require since `fields` may leave them out.
   */
  private defaults(x: Exchange, listRef: unknown): void {
    const m = typeof listRef === 'string' ? /^#\/components\/schemas\/([A-Za-z]+)List$/.exec(listRef) : null;
    if (!m || x.method !== 'GET' || x.status !== 200 || x.requestHeaders['x-method'] !== undefined) return;
    if (new URL(x.url, 'http://localhost').searchParams.has('fields')) return;
    const pointer = `/components/schemas/${m[1]}Default`;
    const list = this.at(`/components/schemas/${m[1]}List`);
    if (!this.at(pointer) || !list) return;
    const name = Object.keys(list.properties ?? {}).find((k) => k !== 'result' && k !== 'metadata')!;
    const item = this.validator(pointer);
    for (const [i, it] of ((JSON.parse(x.body) as Json)[name] ?? []).entries()) {
      if (!item(it))
        throw this.fail(x, `item ${i} without fields does not match ${pointer}: ${this.ajv.errorsText(item.errors)}`);
    }
  }

  private body(x: Exchange, pointer: string): void {
    if (x.method === 'HEAD') return; // the headers of a GET, never a body
    let parsed: unknown;
    try {
      parsed = JSON.parse(x.body);
    } catch {
      throw this.fail(x, 'the body is not JSON');
    }
    const v = this.validator(pointer);
    if (!v(parsed))
      throw this.fail(x, `body does not match ${pointer}: ${this.ajv.errorsText(v.errors, { separator: '; ' })}`);
  }
}

const cache = new Map<string, Conformance>();
/** One checker per document text (the document is the same for every test app). */
export function conformanceFor(docText: string): Conformance {
  let c = cache.get(docText);
  if (!c) cache.set(docText, (c = new Conformance(JSON.parse(docText))));
  return c;
}
