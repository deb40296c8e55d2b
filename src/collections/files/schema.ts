import { Type } from '@sinclair/typebox';
import { f, standardFields, type ComputedField, type Field } from '../machinery/fields.js';
import { downloadLink, signingKey } from './links.js';

/** A signed link computed at every read, so it is always fresh for 15 minutes from that read. */
const downloadUrl: ComputedField = {
  kind: 'computed',
  readOnly: true,
  columns: ['account_id'],
  schema: Type.String({ format: 'uri' }),
  description: 'Signed URL serving the bytes without a bearer token; valid 15 minutes from this read.',
  async compute(db, caller, rows) {
    const key = await signingKey(db);
    return rows.map((r) => downloadLink(key, caller.publicUrl, Number(r.account_id), Number(r.id), caller.now));
  },
};

export const fileFields: Record<string, Field> = {
  // Any printable name: Content-Disposition encodes it (RFC 5987), so quotes or slashes are harmless.
  name: f.string('name', {
    required: true,
    minLength: 1,
    maxLength: 255,
    pattern: '^[^\\u0000-\\u001f\\u007f]+$',
    description: 'File name shown and used on download',
  }),
  mimeType: f.string('mime_type', {
    readOnly: true,
    description: 'Media type given at upload (application/octet-stream when none)',
  }),
  size: f.integer('size', {
    readOnly: true,
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Size in bytes',
  }),
  sha256: f.string('sha256', {
    readOnly: true,
    pattern: '^[0-9a-f]{64}$',
    description: 'Hex SHA-256 digest of the bytes',
  }),
  job: f.assoc('job_id', 'jobs', {
    nullable: true,
    description: 'The job the file is attached to, or null',
    members: ['title', 'reference'],
  }),
  user: f.assoc('user_id', 'users', {
    nullable: true,
    readOnly: true,
    description: 'The uploader (null once that user was deleted)',
    members: ['firstName', 'lastName'],
  }),
  downloadUrl,
  ...standardFields(),
};
