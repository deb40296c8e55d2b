import type { Generated } from 'kysely';

/**
 * Row types of every table. Booleans are stored as integers 0/1 and times as epoch
 * milliseconds on both dialects, so one query codebase serves SQLite and PostgreSQL.
 */
export interface AccountsTable {
  id: Generated<number>;
  company_name: string;
  licenses: number;
  country_code: number;
  company_account_code: string | null;
  created: number;
  modified: number;
}

export interface RolesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  kind: 'administrator' | 'employee' | 'contractor';
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  role_id: number;
  login: string | null;
  password_hash: string | null;
  first_name: string;
  last_name: string;
  company_name: string | null;
  email: string | null;
  phone: string | null;
  mobile: string;
  hourly_rate: number;
  active: number;
  deleted: number;
  colour: string | null;
  is_assignable: number;
  status_message: string | null;
  status_timestamp: string | null;
  created: number;
  modified: number;
}

export interface WorkgroupsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  deleted: number;
  created: number;
  modified: number;
}

export interface WorkgroupMembersTable {
  account_id: number;
  workgroup_id: number;
  user_id: number;
}

export interface OauthClientsTable {
  id: Generated<number>;
  client_id: string;
  secret_hash: string;
  name: string;
  redirect_uris: string; // JSON array
  permissions: string; // JSON array
  allow_permission_choice: number;
  certified: number;
  revoked: number;
  created: number;
}

export interface OauthCodesTable {
  id: Generated<number>;
  code_hash: string;
  client_id: string;
  user_id: number;
  account_id: number;
  permissions: string; // JSON array
  redirect_uri: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  offline: number;
  expires_at: number;
  used_at: number | null;
  created: number;
}

export interface OauthTokensTable {
  id: Generated<number>;
  token_hash: string;
  kind: 'access' | 'refresh';
  client_id: string;
  user_id: number;
  account_id: number;
  permissions: string; // JSON array
  code_id: number | null;
  refresh_id: number | null;
  expires_at: number;
  revoked: number;
  created: number;
}

export interface AuthSessionsTable {
  id: Generated<number>;
  session_hash: string;
  user_id: number;
  account_id: number;
  csrf_token: string;
  expires_at: number;
  created: number;
}

export interface LoginAttemptsTable {
  id: Generated<number>;
  login: string;
  at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface DB {
  accounts: AccountsTable;
  roles: RolesTable;
  users: UsersTable;
  workgroups: WorkgroupsTable;
  workgroup_members: WorkgroupMembersTable;
  oauth_clients: OauthClientsTable;
  oauth_codes: OauthCodesTable;
  oauth_tokens: OauthTokensTable;
  auth_sessions: AuthSessionsTable;
  login_attempts: LoginAttemptsTable;
  settings: SettingsTable;
}
