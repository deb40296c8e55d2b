import { validationError, type ApiErrorBody } from '../../errors.js';
import type { FormField } from './template.js';
import type { ImageKind } from './magic.js';

/**
 * A submission's `answers` checked against its template's fields (PRODUCT §17). Pure: what the
 * files named are (their job, declared type, digest and what their bytes are) is looked up by the
 * caller and passed in. Every failure names `answers.<key>`: a required key missing or empty
 * (`""`, `[]`, `null`) is 1040; an unknown key 1043; a wrong value 1041.
 */
export const TEXT_MAX = 10_000;
export const PHOTOS_MAX = 20;
export const SIGNER_MAX = 200;

export interface FileFacts {
  jobId: number | null;
  mimeType: string;
  sha256: string;
  /** What the bytes are; undefined when they are no image (or could not be read). */
  kind: ImageKind | undefined;
}

export interface CheckedAnswers {
  /** The answers as stored: empty optional answers left out. */
  answers: Record<string, unknown>;
  /** Every file id the answers name. */
  fileIds: number[];
  errors: ApiErrorBody[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 2 ** 31 - 1;
const refId = (v: unknown): number | undefined =>
  isObject(v) && Object.keys(v).length === 1 && isId(v.id) ? v.id : undefined;

/** A real calendar day `YYYY-MM-DD` (2026-02-30 is none). */
export function isCalendarDate(v: unknown): v is string {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const ms = Date.parse(`${v}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === v;
}

/** Every file id an answers object names, whatever its shape (for the lookup before the check). */
export function namedFileIds(fields: readonly FormField[], answers: unknown): number[] {
  if (!isObject(answers)) return [];
  const ids: number[] = [];
  for (const f of fields) {
    const v = answers[f.key];
    if (f.type === 'photo' && Array.isArray(v)) for (const p of v.slice(0, PHOTOS_MAX)) ids.push(refId(p) ?? 0);
    if (f.type === 'signature' && isObject(v)) ids.push(refId(v.file) ?? 0);
  }
  return [...new Set(ids.filter((id) => id > 0))];
}

export function checkAnswers(
  fields: readonly FormField[],
  answers: unknown,
  jobId: number,
  files: ReadonlyMap<number, FileFacts>,
): CheckedAnswers {
  if (!isObject(answers))
    return {
      answers: {},
      fileIds: [],
      errors: [validationError('invalid', 'answers', 'must be an object of key → answer')],
    };
  const errors: ApiErrorBody[] = [];
  const out: Record<string, unknown> = {};
  const fileIds: number[] = [];
  const byKey = new Map(fields.map((f) => [f.key, f]));
  for (const key of Object.keys(answers))
    if (!byKey.has(key)) errors.push(validationError('unknown', `answers.${key.slice(0, 40)}`));
  const fileOf = (id: number, png: boolean): string | undefined => {
    const f = files.get(id);
    if (!f || f.jobId !== jobId) return `file ${id} is no file of this job`;
    if (png) {
      if (f.mimeType !== 'image/png') return `file ${id} is not of type image/png`;
      if (f.kind !== 'png') return `file ${id} is not a PNG image (its bytes)`;
    } else {
      if (!f.mimeType.startsWith('image/')) return `file ${id} is not of an image/* type`;
      if (!f.kind) return `file ${id} is not an image (its bytes)`;
    }
    return undefined;
  };
  for (const field of fields) {
    const name = `answers.${field.key}`;
    const v = answers[field.key];
    if (isEmpty(v)) {
      if (field.required) errors.push(validationError('required', name));
      continue;
    }
    const why = problem(field, v, fileOf, fileIds);
    if (why) errors.push(validationError('invalid', name, why));
    else out[field.key] = v;
  }
  return { answers: out, fileIds: [...new Set(fileIds)], errors };
}

function problem(
  field: FormField,
  v: unknown,
  fileOf: (id: number, png: boolean) => string | undefined,
  fileIds: number[],
): string | undefined {
  switch (field.type) {
    case 'text':
      if (typeof v !== 'string') return 'must be a string';
      return v.length > TEXT_MAX ? `must be at most ${TEXT_MAX} characters` : undefined;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? undefined : 'must be a finite number';
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'must be true or false';
    case 'date':
      return isCalendarDate(v) ? undefined : 'must be a calendar date YYYY-MM-DD';
    case 'select':
      return typeof v === 'string' && field.options!.includes(v) ? undefined : 'must be one of the options';
    case 'multiSelect': {
      if (!Array.isArray(v) || !v.every((o) => typeof o === 'string' && field.options!.includes(o)))
        return 'must be an array of the options';
      return new Set(v).size === v.length ? undefined : 'must not hold an option twice';
    }
    case 'photo': {
      if (!Array.isArray(v) || v.length > PHOTOS_MAX) return `must be an array of 1 to ${PHOTOS_MAX} files {id}`;
      const ids = v.map(refId);
      if (ids.some((id) => id === undefined)) return 'each photo must be a file {id}';
      if (new Set(ids).size !== ids.length) return 'must not name a file twice';
      for (const id of ids as number[]) {
        const bad = fileOf(id, false);
        if (bad) return bad;
      }
      fileIds.push(...(ids as number[]));
      return undefined;
    }
    case 'signature': {
      if (!isObject(v) || Object.keys(v).some((k) => k !== 'file' && k !== 'name'))
        return 'must be {"file": {id}, "name": "…"}';
      const id = refId(v.file);
      if (id === undefined) return 'its file must be {id}';
      if (typeof v.name !== 'string' || v.name.trim().length < 1 || v.name.length > SIGNER_MAX)
        return `its name must be a string of 1 to ${SIGNER_MAX} characters`;
      const bad = fileOf(id, true);
      if (bad) return bad;
      fileIds.push(id);
      return undefined;
    }
  }
}

/**
 * The value §17's `sha256` is taken of: the answers with every file `{id}` replaced by that
 * file's digest (a photo an array of strings, a signature `{"file": "<sha256>", "name": "…"}`).
 */
export function hashedAnswers(
  fields: readonly FormField[],
  answers: Record<string, unknown>,
  digest: (fileId: number) => string,
): Record<string, unknown> {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(answers)) {
    const type = byKey.get(k)?.type;
    if (type === 'photo') out[k] = (v as { id: number }[]).map((p) => digest(p.id));
    else if (type === 'signature') {
      const s = v as { file: { id: number }; name: string };
      out[k] = { file: digest(s.file.id), name: s.name };
    } else out[k] = v;
  }
  return out;
}
