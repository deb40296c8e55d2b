import { sql, type Migration } from 'kysely';
import type { Dialect } from '../index.js';
import { flag, withTimes, type AnyDb } from './columns.js';
import { createItemTable } from './scheme.js';

/**
 * Messages (PRODUCT §18): e-mail to customers, queued here and sent by the mail worker. `message_id`
 * is the RFC 5322 Message-ID every attempt sends; `next_attempt_at`, `lease_until` and `lease_owner`
 * are the queue (one attempt at a time across processes), read through `messages_due`. Clients gain
 * `email_opt_out`.
 */
export const messages = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await createItemTable(
      db,
      dialect,
      'messages',
      (t) =>
        withTimes(
          t
            .addColumn('to_address', 'text', (c) => c.notNull())
            .addColumn('subject', 'text', (c) => c.notNull())
            .addColumn('body', 'text', (c) => c.notNull())
            .addColumn('job_id', 'integer')
            .addColumn('client_id', 'integer')
            .addColumn('quote_id', 'integer')
            .addColumn('invoice_id', 'integer')
            .addColumn('visit_id', 'integer')
            .addColumn('state', 'text', (c) => c.notNull().defaultTo('queued'))
            .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
            .addColumn('last_error', 'text')
            .addColumn('sent_at', 'bigint')
            .addColumn('message_id', 'text', (c) => c.notNull())
            .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
            .addColumn('lease_until', 'bigint')
            .addColumn('lease_owner', 'text'),
        ),
      {
        links: [
          { column: 'job_id', table: 'jobs', onDelete: 'set null' },
          { column: 'client_id', table: 'clients', onDelete: 'set null' },
          { column: 'quote_id', table: 'quotes', onDelete: 'set null' },
          { column: 'invoice_id', table: 'invoices', onDelete: 'set null' },
          { column: 'visit_id', table: 'visits', onDelete: 'set null' },
        ],
        counted: true,
      },
    );
    await sql`create index messages_due on messages (next_attempt_at) where state = 'queued'`.execute(db);
    await db.schema.alterTable('clients').addColumn('email_opt_out', 'integer', flag).execute();
  },
});
