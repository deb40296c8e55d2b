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
