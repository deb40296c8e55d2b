import { Type } from '@sinclair/typebox';
import { AssocRef, f, standardFields, type Field } from '../machinery/fields.js';
import { linesField } from '../machinery/lines.js';

export const QUOTE_STATES = ['draft', 'sent', 'accepted', 'declined'] as const;

const live = { deleted: 0 };

const Acceptance = Type.Object({
  signerName: Type.String(),
  signature: AssocRef,
  at: Type.String({ format: 'date-time' }),
  ip: Type.String(),
  userAgent: Type.String(),
  documentSha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
});

export const quoteFields: Record<string, Field> = {
  job: f.assoc('job_id', 'jobs', {
    required: true,
    referenceFilter: live,
    onDelete: 'cascade',
    members: ['title', 'reference'],
  }),
  client: f.assoc('client_id', 'clients', {
    referenceFilter: live,
    onDelete: 'restrict',
    members: ['name'],
    description: 'Required unless the job has a client, which is the default. Changes only while draft.',
  }),
  number: f.string('number', { readOnly: true, description: 'Q-000001, … per account, given at creation.' }),
  state: f.enum('state', QUOTE_STATES, { readOnly: true, default: 'draft' }),
  validUntil: f.date('valid_until', { nullable: true, description: 'YYYY-MM-DD. Changes only while draft.' }),
  notes: f.text('notes', { nullable: true }),
  lines: linesField('lines', {
    description: "At most 200. Created without lines: the job's quoted charges, in id order. Changes only while draft.",
  }),
  subtotal: f.money('subtotal', { readOnly: true }),
  taxTotal: f.money('tax_total', { readOnly: true }),
  total: f.money('total', { readOnly: true }),
  currency: f.string('currency', { readOnly: true, description: "The account's ISO 4217 code." }),
  viewedAt: f.time('viewed_at', {
    nullable: true,
    description: 'When a share link of the quote was first opened.',
  }),
  acceptance: f.json('acceptance', Acceptance, {
    readOnly: true,
    nullable: true,
    references: { signature: 'files' },
    description:
      "How the customer accepted it on its share page: the signer's name, the signature (an `image/png` `files` item of the job), when, from which address and browser, and `documentSha256` (the SHA-256 of the RFC 8785 canonical JSON of `{lines, subtotal, taxTotal, total}` as the page showed them).",
  }),
  declineReason: f.string('decline_reason', {
    readOnly: true,
    nullable: true,
    maxLength: 2000,
    description: 'What the customer wrote when declining it on its share page.',
  }),
  ...standardFields(),
};
