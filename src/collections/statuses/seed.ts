import type { Executor } from '../../db/tx.js';
import type { ChangeRecording } from '../machinery/write/index.js';
import { statuses } from './index.js';
import type { STATUS_GROUPS } from './schema.js';

/** The statuses every account starts with; the first is the default new jobs get. */
export const STATUS_SEEDS: readonly {
  label: string;
  colour: string;
  group: (typeof STATUS_GROUPS)[number];
  isDefault: boolean;
}[] = [
  { label: 'New', colour: '#3B82F6', group: 'new', isDefault: true },
  { label: 'In progress', colour: '#F59E0B', group: 'inProgress', isDefault: false },
  { label: 'On hold', colour: '#6B7280', group: 'onHold', isDefault: false },
  { label: 'Completed', colour: '#10B981', group: 'completed', isDefault: false },
];

/** Inserts the seeded statuses of a new account, as created items. */
export async function seedStatuses(
  db: Executor,
  changes: ChangeRecording,
  accountId: number,
  now: number,
): Promise<void> {
  const rows = await db
    .insertInto('statuses')
    .values(
      STATUS_SEEDS.map((s) => ({
        account_id: accountId,
        label: s.label,
        colour: s.colour,
        status_group: s.group,
        is_default: s.isDefault ? 1 : 0,
        deleted: 0,
        created: now,
        modified: now,
      })),
    )
    .returning('id')
    .execute();
  changes.created(
    statuses,
    rows.map((r) => r.id),
  );
}
