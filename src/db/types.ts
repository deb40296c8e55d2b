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
  /** Bumped by triggers on every change that can fail an access token of the account (migration 013). */
  auth_epoch: Generated<number>;
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
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
}

export interface WorkgroupsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  deleted: number;
  created: number;
  modified: number;
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
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
  /** Who runs the client, for the consent page (migration 009); null when not stated. */
  publisher: string | null;
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
  /** Set when a second redemption was attempted; tokens issued from the code are then revoked. */
  replayed_at: number | null;
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

/** A digest whose bytes are removed once the file store is back, unless a row uses it again (migration 030). */
export interface FileDeletionsTable {
  sha256: string;
  /** When its removal first failed (epoch ms). */
  since: number;
}

export interface CountersTable {
  account_id: number;
  name: string;
  value: number;
  /** Unused since migration 012 (row counts moved to row_counts). */
  version: Generated<number>;
}

/**
 * Row counts per account and counted table, in slots (migration 012): the count is the sum of
 * `value`, the change version the sum of `version` over the account's slots of the table.
 */
export interface RowCountsTable {
  account_id: number;
  tbl: string;
  slot: number;
  value: number;
  version: number;
}

export interface StatusesTable {
  id: Generated<number>;
  account_id: number;
  label: string;
  colour: string | null;
  /** One of STATUS_GROUPS (the declaration in src/collections/statuses/schema.ts). */
  status_group: string;
  is_default: number;
  deleted: number;
  created: number;
  modified: number;
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
}

/** The address columns clients and jobs share. */
export interface AddressColumns {
  address_line1: string | null;
  address_line2: string | null;
  address_city: string | null;
  address_region: string | null;
  address_postcode: string | null;
  address_country: string | null;
}

export interface ClientsTable extends AddressColumns {
  id: Generated<number>;
  account_id: number;
  name: string;
  company_name: string | null;
  email: string | null;
  phone: string | null;
  mobile: string | null;
  notes: string | null;
  deleted: number;
  created: number;
  modified: number;
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
}

export interface JobsTable extends AddressColumns {
  id: Generated<number>;
  account_id: number;
  reference: string;
  title: string;
  description: string | null;
  client_id: number | null;
  status_id: number;
  /** One of PRIORITIES (src/collections/jobs/schema.ts). */
  priority: string;
  order_number: string | null;
  due_date: string | null; // YYYY-MM-DD
  created_by: number | null;
  deleted: number;
  created: number;
  modified: number;
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
}

export interface VisitsTable {
  id: Generated<number>;
  account_id: number;
  job_id: number;
  user_id: number | null;
  label: string;
  notes: string | null;
  start_time: number;
  end_time: number;
  /** One of VISIT_STATES (src/collections/visits/schema.ts). */
  state: string;
  deleted: number;
  created: number;
  modified: number;
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
}

export interface FilesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  mime_type: string;
  size: number;
  /** Hex digest of the bytes: their key in content-addressed storage. */
  sha256: string;
  job_id: number | null;
  user_id: number | null;
  deleted: number;
  created: number;
  modified: number;
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
}

export interface NotesTable {
  id: Generated<number>;
  account_id: number;
  job_id: number;
  author_id: number | null;
  body: string;
  deleted: number;
  created: number;
  modified: number;
  /** Bumped by a trigger on every update of the row: the item's ETag (migration 011). */
  version: Generated<number>;
}

/** The kept answers of Idempotency-Key requests (migration 011). */
export interface IdempotencyKeysTable {
  id: Generated<number>;
  account_id: number;
  client_id: string;
  user_id: number;
  key: string;
  /** SHA-256 (hex) of method, path and body. */
  fingerprint: string;
  state: 'pending' | 'done';
  /** Names the claim that owns a pending row; a takeover after the lease replaces it. */
  lease: string;
  status: number | null;
  /** JSON object of the headers replayed with the answer. */
  headers: string | null;
  body: string | null;
  /** The claim's time: a pending row's lease and a done row's 24 h both run from it. */
  created: number;
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
  counters: CountersTable;
  row_counts: RowCountsTable;
  statuses: StatusesTable;
  clients: ClientsTable;
  jobs: JobsTable;
  visits: VisitsTable;
  files: FilesTable;
  file_deletions: FileDeletionsTable;
  notes: NotesTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  deliveries: DeliveriesTable;
  webhook_cursors: WebhookCursorsTable;
}

export interface EventsTable {
  id: Generated<number>;
  account_id: number;
  type: string;
  collection: string;
  item_id: number;
  /** JSON text: each changed field with its old and new value on updates, else null. */
  changes: string | null;
  /** JSON text: the item's default fields after the change (as it was, for a deletion). */
  data: string;
  actor_id: number | null;
  client_id: string | null;
  occurred: number;
  /** Row version (the ETag), bumped by a trigger on every update (src/db/versions.ts). */
  version: Generated<number>;
}

export interface WebhooksTable {
  id: Generated<number>;
  account_id: number;
  url: string;
  /** JSON text: an array of `*`, `<collection>.*` or exact event types. */
  events: string;
  active: number;
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  disabled_reason: string | null;
  failing_since: number | null;
  /** The account's last event id when the webhook was created: its cursor starts there (migration 017). */
  events_after: number | null;
  deleted: number;
  created: number;
  modified: number;
  /** Row version (the ETag), bumped by a trigger on every update (src/db/versions.ts). */
  version: Generated<number>;
}

/** Per webhook, the last of its account's events whose deliveries are queued (src/webhooks/fanout.ts). */
export interface WebhookCursorsTable {
  account_id: number;
  webhook_id: number;
  event_id: number;
  /** 1 when the webhook was receiving as of that event. */
  live: number;
}

export interface DeliveriesTable {
  id: Generated<number>;
  account_id: number;
  webhook_id: number;
  event_id: number | null;
  type: string;
  msg_id: string;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number;
  lease_until: number | null;
  lease_owner: string | null;
  created: number;
  modified: number;
  /** Row version (the ETag), bumped by a trigger on every update (src/db/versions.ts). */
  version: Generated<number>;
}
