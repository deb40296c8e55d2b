import type { Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable } from './scheme.js';

/**
 * Plans (PRODUCT §15): a day's routes proposed by the dispatch solver. What the plan was made of
 * (`users`, `visits`: JSON text of `[{id}]`) and made into (`routes`, `unassigned`, `warnings`: JSON
 * text), its measures, its state, the dispatcher's `notes`, and `snapshot` (JSON text: the versions it depends on, which
 * `apply` compares to find it stale). Kept 30 days.
 */
export const plans = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    const real = dialect === 'postgres' ? 'double precision' : 'real';
    await createItemTable(db, dialect, 'plans', (t) =>
      withTimes(
        t
          .addColumn('date', 'text', (c) => c.notNull())
          .addColumn('users', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('visits', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('time_limit_seconds', 'integer', (c) => c.notNull().defaultTo(5))
          .addColumn('state', 'text', (c) => c.notNull().defaultTo('proposed'))
          .addColumn('routes', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('unassigned', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('travel_seconds', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('distance_km', real, (c) => c.notNull().defaultTo(0))
          .addColumn('current_travel_seconds', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('current_distance_km', real, (c) => c.notNull().defaultTo(0))
          .addColumn('compute_milliseconds', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('warnings', 'text', (c) => c.notNull().defaultTo('[]'))
          .addColumn('snapshot', 'text', (c) => c.notNull().defaultTo('{}'))
          .addColumn('notes', 'text')
          .addColumn('deleted', 'integer', flag),
      ),
    );
  },
});
