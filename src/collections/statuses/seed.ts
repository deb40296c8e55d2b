import type { Executor } from '../../db/tx.js';
import { untyped } from '../machinery/read.js';

/** The statuses every account starts with; the first is the default new jobs get. */
export const STATUS_SEEDS = [
  { label: 'New', colour: '#3B82F6', group: 'new', isDefault: true },
  { label: 'In progress', colour: '#F59E0B', group: 'inProgress', isDefault: false },
  { label: 'On hold', colour: '#6B7280', group: 'onHold', isDefault: false },
  { label: 'Completed', colour: '#10B981', group: 'completed', isDefault: false },
] as const;

/** Inserts the seeded statuses for one account (new accounts, and existing ones by migration 002). */
export async function seedStatuses(db: Executor, accountId: number, now: number): Promise<void> {
  await untyped(db)
    .insertInto('statuses')
    .values(STATUS_SEEDS.map((s) => ({
      account_id: accountId, label: s.label, colour: s.colour, status_group: s.group,
      is_default: s.isDefault ? 1 : 0, deleted: 0, created: now, modified: now,
    })))
    .execute();
}
