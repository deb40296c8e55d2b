import { f, standardFields, type Field } from '../machinery/fields.js';

/**
 * One mailbox address and nothing else: no display name, no list, no comment, no control character,
 * so what is sent can never carry a second recipient or a header of its own (header injection).
 */
export const MAILBOX = '^[^\\s@<>"(),;:\\\\\\[\\]]+@[^\\s@<>"(),;:\\\\\\[\\]]+\\.[^\\s@<>"(),;:\\\\\\[\\]]+$';

export const MESSAGE_STATES = ['queued', 'sent', 'failed'] as const;

const link = (column: string, target: string, members: string[]) =>
  f.assoc(column, target, { nullable: true, onDelete: 'set null', members });

/** A message's members (PRODUCT §18). */
export const messageFields: Record<string, Field> = {
  to: f.string('to_address', {
    required: true,
    maxLength: 254,
    pattern: MAILBOX,
    format: 'email',
    description: 'One e-mail address (no display name, no list).',
  }),
  subject: f.string('subject', {
    required: true,
    minLength: 1,
    maxLength: 200,
    pattern: '^[^\\u0000-\\u001f\\u007f]*$',
    description: 'One line of at most 200 characters.',
  }),
  text: f.string('body', { required: true, minLength: 1, maxLength: 20_000, description: 'The plain-text body.' }),
  job: link('job_id', 'jobs', ['title']),
  client: link('client_id', 'clients', ['name']),
  quote: link('quote_id', 'quotes', ['number']),
  invoice: link('invoice_id', 'invoices', ['number']),
  visit: link('visit_id', 'visits', []),
  state: f.enum('state', MESSAGE_STATES, {
    readOnly: true,
    default: 'queued',
    description:
      '`queued` until sent (`sent`) or given up (`failed`: refused for good, retries spent, or the client opted out).',
  }),
  attempts: f.integer('attempts', { readOnly: true, default: 0, description: 'Attempts made so far.' }),
  lastError: f.string('last_error', {
    readOnly: true,
    nullable: true,
    maxLength: 1000,
    description: "The relay's last refusal or the connection's failure; `opted out` for an opted-out client.",
  }),
  sentAt: f.time('sent_at', { nullable: true, description: 'When the relay accepted it.' }),
  messageId: f.string('message_id', {
    readOnly: true,
    description: 'Its RFC 5322 Message-ID (`<…@…>`), the same on every attempt.',
  }),
  ...standardFields({ deleted: false }),
};
