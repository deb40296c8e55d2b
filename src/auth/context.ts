/** The roles seeded in every account (PRODUCT §2). */
export type RoleKind = 'administrator' | 'employee' | 'contractor';

/** Who is calling: everything a request knows once its bearer token was checked. */
export interface AuthContext {
  accountId: number;
  userId: number;
  role: RoleKind;
  permissions: ReadonlySet<string>;
  clientId: string;
  now: number;
}

/**
 * A cached token's revocation epoch not read yet (`authenticate` with `defer`, src/auth/bearer.ts):
 * a read carries it as a column of its own first statement (`epochColumn`, filling `seen`), which
 * saves a round trip per request on PostgreSQL; nothing of the answer may leave before
 * `confirmEpoch` says it still holds.
 */
export interface EpochCheck {
  accountId: number;
  expected: number;
  /** The epoch as the request's first statement read it, when one carried the column. */
  seen?: number;
}
