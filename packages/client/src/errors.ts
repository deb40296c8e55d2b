import type { ApiError, WriteMetadata } from './types.js';

/** One item of a write that failed validation: its index in the request, what the server understood, why. */
export interface Failure {
  index: number;
  rawData: unknown;
  errors: ApiError[];
}

/**
 * Any answer that is not a success: the HTTP status and the envelope's `code` (docs/errors.md:
 * 1080 for a failed `If-Match`, 1090 for a key still running, …) or, for a 422 failure
 * envelope, `failures` with the index of each invalid item. Nothing of a failed write was saved.
 */
export class FieldServiceError extends Error {
  readonly status: number;
  /** The error's code; for a failure envelope, the first error's code. */
  readonly code: number | undefined;
  readonly type: ApiError['type'] | undefined;
  readonly failures: Failure[];
  readonly metadata: WriteMetadata | undefined;
  /** Seconds from `Retry-After`, when the answer had one. */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: unknown, retryAfter?: number) {
    const b = (body ?? {}) as {
      result?: string;
      error?: ApiError;
      failures?: { rawData: unknown; errors: ApiError[] }[];
      metadata?: WriteMetadata;
    };
    const failures = (b.failures ?? []).map((f, i) => ({
      index: b.metadata?.invalidItems[i] ?? i,
      rawData: f.rawData,
      errors: f.errors,
    }));
    const first = b.error ?? failures[0]?.errors[0];
    super(
      b.error
        ? `${status} ${b.error.code}: ${b.error.message}`
        : failures.length
          ? `${status} validation failed: ${failures.map((f) => `item ${f.index}: ${f.errors.map((e) => `${e.code} ${e.field ?? ''}`.trim()).join(', ')}`).join('; ')}`
          : `HTTP ${status}`,
    );
    this.name = 'FieldServiceError';
    this.status = status;
    this.code = first?.code;
    this.type = first?.type;
    this.failures = failures;
    this.metadata = b.metadata;
    this.retryAfter = retryAfter;
  }
}

/**
 * The refresh token no longer works (`invalid_grant`: the owner revoked the app, or the grant
 * expired): the saved tokens are dropped (`onTokens(undefined)` was called) and the user must
 * sign in again. `cause` is the token endpoint's error as oauth4webapi reported it.
 */
export class AuthorizationRevokedError extends Error {
  /** The OAuth error code: `invalid_grant`. */
  readonly code = 'invalid_grant';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthorizationRevokedError';
  }
}
