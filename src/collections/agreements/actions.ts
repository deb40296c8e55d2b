import { ApiError } from '../../errors.js';
import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { billPeriods } from '../../domain/maintenance/billing.js';
import { lockAgreement, setState } from './repository.js';
import { hasEnded, scheduleOfRow, syncOccurrences, todayOf } from './occurrences.js';

/**
 * `POST /agreements/:id/cancel` (PRODUCT §16, §9's actions): `cancelled`, and the untouched future
 * occurrences logically deleted, in one transaction; a cancelled or ended agreement is 422 (1280).
 */
export async function cancel(request: ActionRequest): Promise<ActionAnswer> {
  if (request.item === undefined)
    throw new ApiError('unknownAction', "'cancel' applies to one agreement: POST /agreements/:id/cancel");
  const id = request.item;
  const { caller, services } = request;
  const agreements = services.registry.get('agreements')!;
  const item = await services.writer.transact(caller, async (tx, changes) => {
    const row = await lockAgreement(tx, caller.accountId, id);
    if (!row) throw new ApiError('itemNotFound');
    const { today } = await todayOf(tx, caller);
    const schedule = scheduleOfRow(row);
    const ended = row.state === 'ended' || (schedule !== undefined && hasEnded(schedule, today));
    if (row.state === 'cancelled' || ended || row.deleted)
      throw new ApiError(
        'stateForbids',
        `the agreement is ${row.deleted ? 'deleted' : ended ? 'ended' : row.state}; 'cancel' needs an active agreement`,
      );
    // The periods begun by today are billed before it is cancelled (none later).
    await billPeriods(tx, changes, caller, id);
    await changes.touch(agreements, [id]);
    await setState(tx, caller.accountId, id, 'cancelled', caller.now);
    await syncOccurrences(tx, changes, caller, id);
    await changes.settle();
    return changes.item(agreements, id)!;
  });
  return { status: 200, body: { result: 'success', agreements: [item], metadata: NO_ITEMS } };
}

export const agreementActionDocs: Record<string, ActionDoc> = {
  cancel: {
    on: 'item',
    summary: 'Cancel the agreement',
    description:
      'From `active`: `state` becomes `cancelled` and the future occurrences nobody changed are logically deleted (their jobs and visits); the others stay. A cancelled or ended agreement is 422 (1280), nothing changed.',
  },
};
