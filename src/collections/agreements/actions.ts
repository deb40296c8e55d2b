import type { ActionDoc, RowOf } from '../machinery/collection.js';
import { transition } from '../machinery/write/transition.js';
import { billPeriods } from '../../domain/maintenance/billing.js';
import { hasEnded, scheduleOfRow, syncOccurrences, todayOf } from './occurrences.js';

/**
 * `POST /agreements/:id/cancel` (PRODUCT §16, §9's actions): `cancelled`, and the untouched future
 * occurrences logically deleted, in one transaction; a cancelled or ended agreement is 422 (1280).
 */
export const cancel = transition<RowOf<'agreements'>>('agreements', 'cancel', {
  from: ['active'],
  needs: "'cancel' needs an active agreement",
  async stateOf({ tx, row, caller }) {
    const { today } = await todayOf(tx, caller);
    const schedule = scheduleOfRow(row);
    return schedule !== undefined && hasEnded(schedule, today) ? 'ended' : row.state;
  },
  // The periods begun by today are billed before it is cancelled (none later).
  first: ({ tx, changes, caller, row }) => billPeriods(tx, changes, caller, row.id),
  set: () => ({ state: 'cancelled' }),
  then: ({ tx, changes, caller, row }) => syncOccurrences(tx, changes, caller, row.id),
});

export const agreementActionDocs: Record<string, ActionDoc> = {
  cancel: {
    on: 'item',
    summary: 'Cancel the agreement',
    description:
      'From `active`: `state` becomes `cancelled` and the future occurrences nobody changed are logically deleted (their jobs and visits); the others stay. A cancelled or ended agreement is 422 (1280), nothing changed.',
  },
};
