import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import type { AnyDb } from './columns.js';
import { counted, versioned } from './scheme.js';

/** The collection tables of this day, and the counted ones (a frozen copy of the declarations). */
const TABLES = [
  ...['users', 'workgroups', 'statuses', 'clients', 'jobs', 'visits', 'files', 'notes'],
  ...['events', 'webhooks', 'deliveries'],
];
const COUNTED = ['users', 'workgroups', 'statuses', 'clients', 'jobs', 'visits', 'files', 'notes'];

async function hasTrigger(db: AnyDb, dialect: Dialect, name: string): Promise<boolean> {
  const { rows } =
    dialect === 'postgres'
      ? await sql<{
          n: number;
        }>`select count(*)::int as n from pg_trigger where tgname = ${name} and not tgisinternal`.execute(db)
      : await sql<{
          n: number;
        }>`select count(*) as n from sqlite_master where type = 'trigger' and name = ${name}`.execute(db);
  return Number(rows[0].n) > 0;
}

/**
 * The row versions and row counts the collection declarations need, made by this migration
 * instead of at every start (src/db/counted.ts and versions.ts did that until now, for tables that
 * lacked them): the version column and trigger of the collections added after 011 (events,
 * webhooks, deliveries), and the count triggers of the counted ones (012 and 015 had dropped them
 * for the start to make anew). A database that ran the old start-up already has them: each is made
 * only where missing. A collection added later makes its own in its migration (scheme.ts).
 */
export const derivedTriggers = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    for (const table of TABLES) {
      if (!(await hasTrigger(db, dialect, `${table}_version`))) await versioned(db, dialect, table);
    }
    for (const table of COUNTED) {
      const first = dialect === 'postgres' ? `${table}_rows_insert` : `${table}_count_insert`;
      if (!(await hasTrigger(db, dialect, first))) await counted(db, dialect, table);
    }
  },
});
