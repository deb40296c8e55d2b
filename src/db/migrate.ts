import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Database } from './index.js';
import { core } from './migrations/001_core.js';
import { fieldService } from './migrations/002_fieldservice.js';
import { files } from './migrations/003_files.js';
import { performance } from './migrations/004_performance.js';
import { rateLimits } from './migrations/005_rate_limits.js';
import { countVersions } from './migrations/006_count_versions.js';
import { notes } from './migrations/007_notes.js';
import { clientPublisher } from './migrations/009_client_publisher.js';
import { idempotencyKeys } from './migrations/011_idempotency_keys.js';
import { rowVersions } from './migrations/011_row_versions.js';
import { events } from './migrations/010_events.js';
import { rowCountSlots } from './migrations/012_row_count_slots.js';
import { authEpochs } from './migrations/013_auth_epochs.js';
import { eventBatches } from './migrations/014_event_batches.js';
import { countStatements } from './migrations/015_count_statements.js';
import { deliveriesEventLink } from './migrations/016_deliveries_event_link.js';
import { webhookCursors } from './migrations/017_webhook_cursors.js';
import { derivedTriggers } from './migrations/018_derived_triggers.js';
import { accountKeys } from './migrations/019_account_keys.js';
import { schemaComments } from './migrations/020_schema_comments.js';
import { fileDeletions } from './migrations/030_file_deletions.js';
import { money } from './migrations/040_money.js';
import { payments } from './migrations/041_payments.js';
import { places } from './migrations/050_places.js';
import { crewTime } from './migrations/060_crew_time.js';
import { customFields } from './migrations/070_custom_fields.js';
import { publicClients } from './migrations/080_public_clients.js';
import { eventScope } from './migrations/081_event_scope.js';
import { calendarLinks } from './migrations/082_calendar_links.js';
import { customFieldsEverywhere } from './migrations/090_custom_fields_everywhere.js';
import { eventReads } from './migrations/091_event_reads.js';
import { uniqueComplete } from './migrations/092_unique_complete.js';
import { oauthConsents } from './migrations/093_oauth_consents.js';
import { accountDocuments } from './migrations/095_account_documents.js';
import { planning } from './migrations/100_planning.js';
import { plans } from './migrations/101_plans.js';
import { assets } from './migrations/110_assets.js';
import { agreements } from './migrations/111_agreements.js';
import { agreementBilling } from './migrations/112_agreement_billing.js';
import { forms } from './migrations/120_forms.js';
import { messages } from './migrations/130_messages.js';
import { shareLinks } from './migrations/131_share_links.js';
import { visitEta } from './migrations/132_visit_eta.js';
import { bookingLinks } from './migrations/133_booking_links.js';
import { containsIndex } from './migrations/140_contains_index.js';
import { memberIndex } from './migrations/141_member_index.js';

/** Migrations are code, listed here in order; each receives the dialect it runs on. */
const MIGRATIONS: Record<string, (d: Database['dialect']['name']) => Migration> = {
  '001_core': core,
  '002_fieldservice': fieldService,
  '003_files': files,
  '004_performance': performance,
  '005_rate_limits': rateLimits,
  '006_count_versions': countVersions,
  '007_notes': notes,
  '009_client_publisher': clientPublisher,
  '011_idempotency_keys': idempotencyKeys,
  '011_row_versions': rowVersions,
  '010_events': events,
  '012_row_count_slots': rowCountSlots,
  '013_auth_epochs': authEpochs,
  '014_event_batches': eventBatches,
  '015_count_statements': countStatements,
  '016_deliveries_event_link': deliveriesEventLink,
  '017_webhook_cursors': webhookCursors,
  '018_derived_triggers': derivedTriggers,
  '019_account_keys': accountKeys,
  '020_schema_comments': schemaComments,
  '030_file_deletions': fileDeletions,
  '040_money': money,
  '041_payments': payments,
  '050_places': places,
  '060_crew_time': crewTime,
  '070_custom_fields': customFields,
  '080_public_clients': publicClients,
  '081_event_scope': eventScope,
  '082_calendar_links': calendarLinks,
  '090_custom_fields_everywhere': customFieldsEverywhere,
  '091_event_reads': eventReads,
  '092_unique_complete': uniqueComplete,
  '093_oauth_consents': oauthConsents,
  '095_account_documents': accountDocuments,
  '100_planning': planning,
  '101_plans': plans,
  '110_assets': assets,
  '111_agreements': agreements,
  '112_agreement_billing': agreementBilling,
  '120_forms': forms,
  '130_messages': messages,
  '131_share_links': shareLinks,
  '132_visit_eta': visitEta,
  '133_booking_links': bookingLinks,
  '140_contains_index': containsIndex,
  '141_member_index': memberIndex,
};

export class MigrationFailed extends Error {}

/** Every migration this code knows, in order (readiness checks they are all applied). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS);

/**
 * The last of the migrations branches numbered apart (two are 011; 008 never landed): a database
 * may have applied these in another order. Every later one has a number of its own, higher than
 * the one before (src/db/migrate.test.ts), and applies after every migration already applied.
 */
export const LEGACY_LAST = '017_webhook_cursors';

/**
 * Why the pending migrations cannot run on a database that applied `applied`, or undefined when
 * they can: the only disorder accepted is among the legacy ones, before any later one ran.
 */
export function orderError(known: readonly string[], applied: readonly string[]): string | undefined {
  const unknown = applied.filter((n) => !known.includes(n));
  if (unknown.length) return `the database applied migrations this code does not know: ${unknown.join(', ')}`;
  const last = [...applied].sort().at(-1);
  if (last === undefined) return undefined;
  const late = known.filter((n) => !applied.includes(n) && n < last && (n > LEGACY_LAST || last > LEGACY_LAST));
  if (late.length)
    return `migrations ${late.join(', ')} would apply before ${last}, which the database already applied`;
  return undefined;
}

function migratorOf(database: Database): Migrator {
  const provider: MigrationProvider = {
    async getMigrations() {
      return Object.fromEntries(Object.entries(MIGRATIONS).map(([k, m]) => [k, m(database.dialect.name)]));
    },
  };
  // Kysely refuses any disorder unless told to allow it; the legacy migrations need it, and
  // orderError refuses every other case first.
  return new Migrator({ db: database.db, provider, allowUnorderedMigrations: true });
}

export async function migrateToLatest(database: Database): Promise<void> {
  const migrator = migratorOf(database);
  const applied = (await migrator.getMigrations()).filter((m) => m.executedAt !== undefined).map((m) => m.name);
  const refused = orderError(MIGRATION_NAMES, applied);
  if (refused) throw new Error(`cannot migrate: ${refused}`);
  check(await migrator.migrateToLatest());
}

/** Applies the migrations up to `name` only: tests build a database as an older release left it. */
export async function migrateTo(database: Database, name: string): Promise<void> {
  check(await migratorOf(database).migrateTo(name));
}

function check({ error, results }: MigrationResultSet): void {
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    // No migration ran: the database itself could not be used (unreachable, missing): said by connect().
    if (!failed) throw error;
    throw new MigrationFailed(`migration ${failed.migrationName} failed: ${(error as Error).message ?? error}`);
  }
}
