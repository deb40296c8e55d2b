-- Distributes the schema over a Citus cluster (docs/deployment.md, "The path to Citus").
-- Run once, on the coordinator, as the database owner, after the server has migrated the database
-- (start it once, or `fsm doctor`) and before it serves on the cluster:
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f scripts/citus-distribute.sql
-- Every table with account_id is distributed by it and co-located with accounts (distributed by
-- its id): one account's rows live on one node. Every other table is a reference table, copied to
-- every node. Parents come before the tables whose foreign keys reference them.
-- src/db/citus.test.ts runs this file against the live schema (with stand-ins for Citus's
-- functions) and fails when a table is missing, extra, or out of order.

-- The row-count, row-version, revocation-epoch and event triggers run on each shard
-- (docs/deployment.md says why that is sound); Citus refuses to distribute a table with triggers
-- unless this is on. Set it for the cluster too (ALTER SYSTEM on every node) so sessions have it.
set citus.enable_unsafe_triggers to on;

select create_distributed_table('accounts', 'id');
select create_distributed_table('roles', 'account_id', colocate_with => 'accounts');
select create_distributed_table('users', 'account_id', colocate_with => 'accounts');
select create_distributed_table('workgroups', 'account_id', colocate_with => 'accounts');
select create_distributed_table('workgroup_members', 'account_id', colocate_with => 'accounts');
select create_distributed_table('oauth_codes', 'account_id', colocate_with => 'accounts');
select create_distributed_table('oauth_tokens', 'account_id', colocate_with => 'accounts');
select create_distributed_table('oauth_consents', 'account_id', colocate_with => 'accounts');
select create_distributed_table('auth_sessions', 'account_id', colocate_with => 'accounts');
select create_distributed_table('statuses', 'account_id', colocate_with => 'accounts');
select create_distributed_table('clients', 'account_id', colocate_with => 'accounts');
select create_distributed_table('sites', 'account_id', colocate_with => 'accounts');
select create_distributed_table('contacts', 'account_id', colocate_with => 'accounts');
select create_distributed_table('agreements', 'account_id', colocate_with => 'accounts');
select create_distributed_table('jobs', 'account_id', colocate_with => 'accounts');
select create_distributed_table('visits', 'account_id', colocate_with => 'accounts');
select create_distributed_table('files', 'account_id', colocate_with => 'accounts');
select create_distributed_table('notes', 'account_id', colocate_with => 'accounts');
select create_distributed_table('counters', 'account_id', colocate_with => 'accounts');
select create_distributed_table('row_counts', 'account_id', colocate_with => 'accounts');
select create_distributed_table('idempotency_keys', 'account_id', colocate_with => 'accounts');
select create_distributed_table('events', 'account_id', colocate_with => 'accounts');
select create_distributed_table('event_batches', 'account_id', colocate_with => 'accounts');
select create_distributed_table('webhooks', 'account_id', colocate_with => 'accounts');
select create_distributed_table('webhook_cursors', 'account_id', colocate_with => 'accounts');
select create_distributed_table('deliveries', 'account_id', colocate_with => 'accounts');
select create_distributed_table('timesheets', 'account_id', colocate_with => 'accounts');
select create_distributed_table('locations', 'account_id', colocate_with => 'accounts');
select create_distributed_table('unavailabilities', 'account_id', colocate_with => 'accounts');
select create_distributed_table('custom_field_definitions', 'account_id', colocate_with => 'accounts');
select create_distributed_table('custom_unique_values', 'account_id', colocate_with => 'accounts');
select create_distributed_table('tax_rates', 'account_id', colocate_with => 'accounts');
select create_distributed_table('products', 'account_id', colocate_with => 'accounts');
select create_distributed_table('quotes', 'account_id', colocate_with => 'accounts');
select create_distributed_table('invoices', 'account_id', colocate_with => 'accounts');
select create_distributed_table('charges', 'account_id', colocate_with => 'accounts');
select create_distributed_table('payments', 'account_id', colocate_with => 'accounts');
select create_distributed_table('skills', 'account_id', colocate_with => 'accounts');
select create_distributed_table('user_skills', 'account_id', colocate_with => 'accounts');
select create_distributed_table('job_skills', 'account_id', colocate_with => 'accounts');
select create_distributed_table('plans', 'account_id', colocate_with => 'accounts');
select create_distributed_table('form_templates', 'account_id', colocate_with => 'accounts');
select create_distributed_table('job_form_templates', 'account_id', colocate_with => 'accounts');
select create_distributed_table('form_submissions', 'account_id', colocate_with => 'accounts');
select create_distributed_table('form_submission_files', 'account_id', colocate_with => 'accounts');
select create_distributed_table('assets', 'account_id', colocate_with => 'accounts');
select create_distributed_table('job_assets', 'account_id', colocate_with => 'accounts');
select create_distributed_table('agreement_skills', 'account_id', colocate_with => 'accounts');
select create_distributed_table('agreement_assets', 'account_id', colocate_with => 'accounts');
select create_distributed_table('messages', 'account_id', colocate_with => 'accounts');

select create_reference_table('file_deletions');
select create_reference_table('logins');
select create_reference_table('login_attempts');
select create_reference_table('oauth_clients');
select create_reference_table('rate_limits');
select create_reference_table('settings');
