import { validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import { statusFields } from './schema.js';

/**
 * "Exactly one default": making a status the default clears the old one, so the default is only
 * ever replaced, never removed. Unsetting, deleting or logically deleting it directly is refused.
 */
async function check({ op, item, existing }: TxItemContext<'statuses'>): Promise<ApiErrorBody[]> {
  const errors: ApiErrorBody[] = [];
  const wasDefault = existing?.is_default === 1;
  const makeAnother = 'make another status the default first';
  if (op === 'delete') {
    if (wasDefault)
      errors.push(validationError('conflict', 'isDefault', `the default status cannot be deleted; ${makeAnother}`));
    return errors;
  }
  if (wasDefault && item.isDefault === false)
    errors.push(validationError('conflict', 'isDefault', `the default cannot be unset; ${makeAnother}`));
  const isDefault = item.isDefault === true || (wasDefault && item.isDefault === undefined);
  const deleted = item.deleted === true || (existing?.deleted === 1 && item.deleted === undefined);
  if (isDefault && deleted)
    errors.push(
      validationError(
        'conflict',
        item.deleted === true ? 'deleted' : 'isDefault',
        'the default status cannot be deleted',
      ),
    );
  return errors;
}

export const statuses = defineCollection({
  name: 'statuses',
  table: 'statuses',
  description: 'The stages a job goes through; one of them is the default new jobs get.',
  fields: statusFields,
  counted: true,
  example: () => ({ label: 'Awaiting parts', colour: '#112233', group: 'onHold' }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'none', contractor: 'none' },
  },
  rules: {
    check,
    // The fill below changes the old default, a row the batch does not name.
    exclusive: true,
    // Clear the old default before writing the new one: a partial unique index allows only one.
    // The old default changes too, so the recorder is told before it does.
    async fill({ caller, db, op, item, changes }) {
      if (op === 'delete' || item.isDefault !== true) return;
      const old = await db
        .selectFrom('statuses')
        .select('id')
        .where('account_id', '=', caller.accountId)
        .where('is_default', '=', 1)
        .execute();
      await changes.touch(
        statuses,
        old.map((r) => r.id),
      );
      await db
        .updateTable('statuses')
        .set({ is_default: 0, modified: caller.now })
        .where('account_id', '=', caller.accountId)
        .where('is_default', '=', 1)
        .execute();
    },
  },
});
