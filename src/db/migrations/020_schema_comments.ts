import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';

const VERSION = "Bumped by a trigger on every update of the row: the item's ETag (PRODUCT §7).";
const JSON_ARRAY = 'JSON text: an array of permissions or URIs.';

/** What tables and columns mean where the name does not say it; `table.column`, or a table alone. */
const COMMENTS: [string, string][] = [
  [
    'accounts.auth_epoch',
    'Bumped by triggers on every change that can fail an access token of the account (migration 013).',
  ],
  ...[
    'users',
    'workgroups',
    'statuses',
    'clients',
    'jobs',
    'visits',
    'files',
    'notes',
    'events',
    'webhooks',
    'deliveries',
  ].map((t): [string, string] => [`${t}.version`, VERSION]),
  ['oauth_clients.redirect_uris', JSON_ARRAY],
  ['oauth_clients.permissions', JSON_ARRAY],
  ['oauth_clients.publisher', 'Who runs the client, for the consent page (migration 009); null when not stated.'],
  ['oauth_codes.permissions', JSON_ARRAY],
  [
    'oauth_codes.replayed_at',
    'Set when a second redemption was attempted; tokens issued from the code are then revoked.',
  ],
  ['oauth_tokens.permissions', JSON_ARRAY],
  ['counters.version', 'Unused since migration 012 (row counts moved to row_counts).'],
  [
    'row_counts',
    "Row counts per account and counted table, in slots (migration 012): the count is the sum of value, the change version the sum of version over the account's slots of the table.",
  ],
  ['statuses.status_group', 'One of STATUS_GROUPS (src/collections/statuses/schema.ts).'],
  ['jobs.priority', 'One of PRIORITIES (src/collections/jobs/schema.ts).'],
  ['jobs.due_date', 'A calendar date, YYYY-MM-DD.'],
  ['visits.state', 'One of VISIT_STATES (src/collections/visits/schema.ts).'],
  ['files.sha256', 'Hex digest of the bytes: their key in content-addressed storage.'],
  ['idempotency_keys', 'The kept answers of Idempotency-Key requests (migration 011).'],
  ['idempotency_keys.fingerprint', 'SHA-256 (hex) of method, path and body.'],
  ['idempotency_keys.lease', 'Names the claim that owns a pending row; a takeover after the lease replaces it.'],
  ['idempotency_keys.headers', 'JSON object of the headers replayed with the answer.'],
  ['idempotency_keys.created', "The claim's time: a pending row's lease and a done row's 24 h both run from it."],
  ['events.changes', 'JSON text: each changed field with its old and new value on updates, else null.'],
  ['events.data', "JSON text: the item's default fields after the change (as it was, for a deletion)."],
  ['event_batches', "A transaction's events, staged until its commit (migration 014)."],
  ['webhooks.events', 'JSON text: an array of `*`, `<collection>.*` or exact event types.'],
  [
    'webhooks.events_after',
    "The account's last event id when the webhook was created: its cursor starts there (migration 017).",
  ],
  [
    'webhook_cursors',
    "Per webhook, the last of its account's events whose deliveries are queued (src/webhooks/fanout.ts).",
  ],
  ['webhook_cursors.live', '1 when the webhook was receiving as of that event.'],
  [
    'logins',
    'Every login with its account and user, unique in the service (migration 019); no account_id: a reference table.',
  ],
];

/**
 * The schema says what its columns mean (PostgreSQL's comments, shown by `\d+`): src/db/types.ts
 * is generated from them (scripts/db-types.mjs). SQLite has no comments. A column added later gets
 * its comment in the migration that adds it.
 */
export const schemaComments = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    if (dialect !== 'postgres') return;
    for (const [target, text] of COMMENTS) {
      const kind = target.includes('.') ? 'column' : 'table';
      await sql.raw(`comment on ${kind} ${target} is '${text.replace(/'/g, "''")}'`).execute(db);
    }
  },
});
