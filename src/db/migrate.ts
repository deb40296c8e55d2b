import { Migrator, type Migration, type MigrationProvider } from 'kysely';
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
import { fileDeletions } from './migrations/030_file_deletions.js';

/** Migrations are code, listed here in order; each receives the dialect it runs on. */
const MIGRATIONS: Record<string, (d: Database['dialect']) => Migration> = {
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
  '030_file_deletions': fileDeletions,
};

/** Every migration this code knows, in order (readiness checks they are all applied). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS);

export async function migrateToLatest(database: Database): Promise<void> {
  const provider: MigrationProvider = {
    async getMigrations() {
      return Object.fromEntries(Object.entries(MIGRATIONS).map(([k, m]) => [k, m(database.dialect)]));
    },
  };
  // Branches number their migrations apart (007 and 008 may land after 009 was applied somewhere):
  // a migration missing from the applied ones runs even when a later-numbered one already ran.
  const migrator = new Migrator({ db: database.db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? error}`);
  }
}
