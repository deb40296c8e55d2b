import { Type } from '@sinclair/typebox';
import { f, standardFields, type Field } from '../machinery/fields.js';

/** `*`, `<collection>.*` or an exact type such as `jobs.created`. */
const EVENT_PATTERN = '^(\\*|[A-Za-z]+\\.(\\*|created|updated|deleted))$';

export const webhookFields: Record<string, Field> = {
  url: f.string('url', {
    required: true,
    maxLength: 2000,
    description:
      'Where deliveries are POSTed: https, to a public address; special-purpose addresses (loopback, private, link-local, documentation, …) are refused (at creation and after DNS resolution at each delivery).',
  }),
  events: f.json(
    'events',
    Type.Array(Type.String({ pattern: EVENT_PATTERN, maxLength: 100 }), { minItems: 1, maxItems: 50 }),
    {
      required: true,
      description: 'The event types delivered: `*`, `<collection>.*` or exact types such as `jobs.created`.',
    },
  ),
  active: f.boolean('active', {
    default: true,
    description: 'Deliveries wait while false. Setting it true again clears disabledReason.',
  }),
  description: f.string('description', { nullable: true, maxLength: 500 }),
  // Stored, never read back: shown in the create answer and by rotateSecret only (rules.reveal).
  secret: f.writeOnly(Type.String(), {
    readOnly: true,
    description: '`whsec_…`: returned only in the create answer and by POST /webhooks/:id/rotateSecret.',
  }),
  disabledReason: f.enum('disabled_reason', ['gone', 'failing'], {
    readOnly: true,
    nullable: true,
    description:
      'Why the server disabled the webhook: `gone` (a 410 answer), `failing` (no success for 5 days); null otherwise.',
  }),
  // A logically deleted webhook receives nothing, like an inactive one.
  ...standardFields(),
};
