import { Type } from '@sinclair/typebox';
import { f, type ComputedField, type Field } from '../machinery/fields.js';

const Changes = Type.Record(Type.String(), Type.Object({ old: Type.Unknown(), new: Type.Unknown() }));

/** `actor {id}`: the user who made the change, or null (the operator's CLI, the server itself). */
const actor: ComputedField = {
  kind: 'computed',
  readOnly: true,
  schema: Type.Union([Type.Object({ id: Type.Integer() }), Type.Null()]),
  description: 'The user who made the change; null for the operator (CLI) and the server itself.',
  columns: ['actor_id'],
  stable: true,
  compute: async (_db, _caller, rows) =>
    rows.map((r) => (r.actor_id === null || r.actor_id === undefined ? null : { id: Number(r.actor_id) })),
};

/** An event is written by the server only: every field is read-only. */
export const eventFields: Record<string, Field> = {
  type: f.string('type', {
    readOnly: true,
    description: '`<collection>.created|updated|deleted` (a logical deletion is `updated`).',
  }),
  collection: f.string('collection', { readOnly: true }),
  item: f.object({ id: f.integer('item_id') }, { readOnly: true, description: 'The item that changed.' }),
  changes: f.json('changes', Changes, {
    readOnly: true,
    nullable: true,
    description: 'On `updated`: each changed default field, `{old, new}`; otherwise null.',
  }),
  data: f.json('data', Type.Record(Type.String(), Type.Unknown()), {
    readOnly: true,
    description: "The item's default fields after the change (for `deleted`, as it was).",
  }),
  actor,
  clientId: f.string('client_id', {
    readOnly: true,
    nullable: true,
    description: 'The OAuth client of the token that made the change, or null.',
  }),
  occurred: f.time('occurred', { description: 'When the change committed.' }),
};
