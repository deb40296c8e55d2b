import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './index.js';
import { core } from './migrations/001_core.js';

/** Migrations are code, listed here in order; each receives the dialect it runs on. */
const MIGRATIONS: Record<string, (d: Database['dialect']) => Migration> = {
  '001_core': core,
};

export async function migrateToLatest(database: Database): Promise<void> {
  const provider: MigrationProvider = {
    async getMigrations() {
      return Object.fromEntries(Object.entries(MIGRATIONS).map(([k, m]) => [k, m(database.dialect)]));
    },
  };
  const migrator = new Migrator({ db: database.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? error}`);
  }
}
