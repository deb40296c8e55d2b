/**
 * The errors of the service, free of any transport: each has a stable numeric code, an error type
 * and the HTTP status it is answered with (src/http/envelope.ts turns them into the spec's envelope,
 * in one place). docs/errors.md lists them all and a test keeps that page and this table in step.
 * Every layer may import this module; it imports nothing.
 */
export type ErrorType = 'validation' | 'content' | 'client' | 'server';

export const ERRORS = {
  malformedJson: { code: 1001, status: 400, type: 'client', message: 'The request body is not valid JSON' },
  badModifier: { code: 1002, status: 400, type: 'client', message: 'Invalid query modifier' },
  versionMissing: { code: 1003, status: 400, type: 'client', message: 'The X-Version header is required' },
  versionUnsupported: { code: 1004, status: 400, type: 'client', message: 'Unsupported X-Version; supported: 1.0' },
  badMethodOverride: {
    code: 1005,
    status: 400,
    type: 'client',
    message: 'X-Method must be GET, POST, PATCH or DELETE; it replaces POST only (any method may ask for GET)',
  },
  idempotencyKeyInvalid: {
    code: 1006,
    status: 400,
    type: 'client',
    message: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
  },
  badEncoding: { code: 1009, status: 400, type: 'client', message: 'The request is not valid percent-encoded UTF-8' },
  tokenMissing: { code: 1010, status: 401, type: 'client', message: 'An access token is required' },
  tokenInvalid: { code: 1011, status: 401, type: 'client', message: 'The access token is invalid, expired or revoked' },
  permissionMissing: { code: 1020, status: 403, type: 'client', message: 'The access token lacks the permission' },
  roleForbids: { code: 1021, status: 403, type: 'client', message: "The user's role does not allow this action" },
  linkInvalid: { code: 1022, status: 403, type: 'client', message: 'The download link is invalid' },
  linkExpired: { code: 1023, status: 403, type: 'client', message: 'The download link has expired' },
  unknownCollection: { code: 1030, status: 404, type: 'client', message: 'Unknown collection' },
  itemNotFound: { code: 1031, status: 404, type: 'client', message: 'Item not found' },
  unknownAction: { code: 1032, status: 404, type: 'client', message: 'Unknown action' },
  notFound: { code: 1033, status: 404, type: 'client', message: 'Not found' },
  methodNotAllowed: { code: 1050, status: 405, type: 'client', message: 'Method not allowed for this URL' },
  bodyTooLarge: { code: 1060, status: 413, type: 'client', message: 'The request body is too large' },
  tooManyItems: { code: 1061, status: 413, type: 'client', message: 'Too many items in one request' },
  fileTooLarge: { code: 1062, status: 413, type: 'client', message: 'The file is larger than the upload limit' },
  preconditionFailed: {
    code: 1080,
    status: 412,
    type: 'client',
    message: 'If-Match does not match the current ETag',
  },
  idempotencyInFlight: {
    code: 1090,
    status: 409,
    type: 'client',
    message: 'A request with this Idempotency-Key is still being processed',
  },
  unsupportedMediaType: {
    code: 1070,
    status: 415,
    type: 'client',
    message: 'The request body must be application/json',
  },
  rateLimited: { code: 1429, status: 429, type: 'client', message: 'Too many requests' },
  bodyTimeout: {
    code: 1408,
    status: 408,
    type: 'client',
    message: 'The request body stopped arriving, or arrived too slowly; the connection is closed',
  },
  wrongCollection: {
    code: 1247,
    status: 422,
    type: 'content',
    message: 'The request collection type is not supported by this endpoint',
  },
  badCollectionBody: {
    code: 1248,
    status: 422,
    type: 'content',
    message: 'The body must be an object holding the collection as an array of items',
  },
  idempotencyKeyReused: {
    code: 1249,
    status: 422,
    type: 'client',
    message: 'This Idempotency-Key was used for another request (method, path or body)',
  },
  stateForbids: {
    code: 1280,
    status: 422,
    type: 'content',
    message: "The item's state does not allow this action",
  },
  generic: { code: 1336, status: 422, type: 'client', message: 'The request cannot be processed' },
  visitState: {
    code: 1350,
    status: 422,
    type: 'client',
    message: "The visit's state (or its missing user) does not allow this action; nothing was changed",
  },
  server: { code: 1500, status: 500, type: 'server', message: 'Internal server error' },
  unavailable: { code: 1503, status: 503, type: 'server', message: 'The service is temporarily unavailable' },
} as const satisfies Record<string, { code: number; status: number; type: ErrorType; message: string }>;

export type ErrorName = keyof typeof ERRORS;

/** Validation error codes, used inside failures[].errors[] (HTTP 422 with the failure envelope). */
export const VALIDATION = {
  required: { code: 1040, message: (f: string) => `The field '${f}' is required` },
  invalid: { code: 1041, message: (f: string, why: string) => `The field '${f}' is invalid: ${why}` },
  readOnly: { code: 1042, message: (f: string) => `The field '${f}' is read-only` },
  unknown: { code: 1043, message: (f: string) => `The field '${f}' does not exist` },
  association: {
    code: 1044,
    message: (f: string) => `The association '${f}' must be an object with only an integer 'id' from 1 to 2147483647`,
  },
  reference: { code: 1045, message: (f: string) => `The item referenced by '${f}' does not exist` },
  unique: { code: 1046, message: (f: string) => `The value of '${f}' is already in use` },
  notFound: { code: 1047, message: (f: string) => `No item with this '${f}' exists` },
  duplicate: { code: 1048, message: (f: string) => `The same '${f}' appears twice in the request` },
  notAnObject: { code: 1049, message: () => 'The item must be a JSON object' },
  conflict: { code: 1052, message: (f: string, why: string) => `The field '${f}' cannot be changed: ${why}` },
  inUse: {
    code: 1051,
    message: (f: string, why: string) =>
      `The item with this '${f}' is still referenced by other items and cannot be deleted${why ? `: ${why}` : ''}`,
  },
} as const;

export interface ApiErrorBody {
  type: ErrorType;
  code: number;
  message: string;
  field?: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly body: ApiErrorBody;
  readonly headers: Record<string, string>;

  constructor(name: ErrorName, detail?: string, headers: Record<string, string> = {}) {
    const e = ERRORS[name];
    const message = detail ? `${e.message}: ${detail}` : e.message;
    super(message);
    this.status = e.status;
    this.body = { type: e.type, code: e.code, message };
    this.headers = headers;
  }
}

export function validationError(kind: keyof typeof VALIDATION, field: string, why = ''): ApiErrorBody {
  const v = VALIDATION[kind];
  return {
    type: 'validation',
    code: v.code,
    message: (v.message as (f: string, w: string) => string)(field, why),
    field,
  };
}
