import crypto from 'node:crypto';
import { defineCollection, type ItemContext, type TxItemContext } from '../machinery/collection.js';
import { optedOut } from './repository.js';
import { messageFields } from './schema.js';

export const OPTED_OUT = 'opted out';

/** The domain of a Message-ID: the sender's, else the server's public host. */
export function messageIdDomain(mailFrom: string | undefined, publicUrl: string): string {
  const from = mailFrom && /@([^\s<>@]+)>?$/.exec(mailFrom)?.[1];
  return from || new URL(publicUrl).hostname.replace(/^\[|\]$/g, '') || 'localhost';
}

/** A fresh Message-ID (RFC 5322 `<id-left@id-right>`), made once: every attempt sends the same. */
export const newMessageId = (domain: string): string => `<${crypto.randomBytes(16).toString('hex')}@${domain}>`;

/** The Message-ID's domain needs the settings, which only `prepare` is given. */
async function prepare({ op, row, caller, services }: ItemContext<'messages'>): Promise<void> {
  if (op !== 'create') return;
  row.message_id = newMessageId(messageIdDomain(services?.config.mailFrom, caller.publicUrl));
}

/** Queued for a first attempt at once, unless the client opted out: then failed, never sent. */
async function fill({ op, row, caller, db }: TxItemContext<'messages'>): Promise<void> {
  if (op !== 'create') return;
  row.message_id ??= newMessageId(messageIdDomain(undefined, caller.publicUrl));
  row.next_attempt_at = caller.now;
  row.attempts = 0;
  if (await optedOut(db, caller.accountId, row.client_id, row.to_address as string)) {
    row.state = 'failed';
    row.last_error = OPTED_OUT;
  } else row.state = 'queued';
}

/** E-mail to customers (PRODUCT §18), sent by the server through SMTP_URL (src/mail/). */
export const messages = defineCollection({
  name: 'messages',
  table: 'messages',
  description:
    'E-mail to customers, sent off the request path through the SMTP relay (`SMTP_URL`, from `MAIL_FROM`), retried on `MAIL_RETRY_SCHEDULE` after a temporary refusal; every change of `state` is an event. A message whose client opted out (`emailOptOut`) is `failed` with `lastError` `opted out`, never sent. Administrators and Employees.',
  fields: messageFields,
  appendOnly: true,
  counted: true,
  textField: 'subject',
  example: () => ({ to: 'customer@example.com', subject: 'Your visit', text: 'We will be with you on Monday.' }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'none' },
    write: { administrator: 'all', employee: 'all', contractor: 'none' },
  },
  rules: { prepare, fill },
});
