import { createHash } from 'node:crypto';
import { validationError, type ApiErrorBody } from '../../errors.js';
import type { BlobStore } from '../../storage/blobs.js';
import { checkAnswers, hashedAnswers, namedFileIds, type FileFacts } from '../../domain/forms/answers.js';
import { canonicalJson } from '../../domain/forms/jcs.js';
import { MAGIC_BYTES, imageKind, type ImageKind } from '../../domain/forms/magic.js';
import { defineCollection, type ItemContext, type TxItemContext } from '../machinery/collection.js';
import { byTheirJob } from '../policy.js';
import { filesOf, linkFiles, submissionOf, templateNow, visitJob } from './repository.js';
import { formSubmissionFields } from './schema.js';

const idOf = (v: unknown) => (v as { id: number } | null | undefined)?.id;

/** What the bytes of the files an item names are, by digest: read in `prepare`, outside the transaction. */
const kinds = new WeakMap<object, Map<string, ImageKind | undefined>>();
/** The files a checked item names, for `after` to record. */
const named = new WeakMap<object, number[]>();

async function headOf(blobs: BlobStore, sha256: string): Promise<ImageKind | undefined> {
  const opened = await blobs.open(sha256).catch(() => undefined);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of opened.stream) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= MAGIC_BYTES) break;
    }
  } finally {
    opened.stream.destroy();
  }
  return imageKind(Buffer.concat(chunks).subarray(0, MAGIC_BYTES));
}

/** Reads the first bytes of every file the answers name (a photo must be an image by its bytes, not only its type). */
async function prepare({ caller, item, services }: ItemContext<'form_submissions'>): Promise<void> {
  const templateId = idOf(item.template);
  if (!services || templateId === undefined) return;
  const db = services.database.db;
  const template = await templateNow(db, caller.accountId, templateId);
  if (!template) return;
  const rows = await filesOf(db, caller.accountId, namedFileIds(template.fields, item.answers));
  const found = new Map<string, ImageKind | undefined>();
  for (const sha of new Set(rows.map((r) => r.sha256))) found.set(sha, await headOf(services.blobs, sha));
  kinds.set(item, found);
}

/**
 * In the transaction: the job is one the caller can see, the visit is of the job, a correction is
 * of the same template and job, and the answers hold against the template's current fields; then
 * the read-only members and the sha256 (PRODUCT §17).
 */
async function check(ctx: TxItemContext<'form_submissions'>): Promise<ApiErrorBody[]> {
  const { caller, db, item, row } = ctx;
  const account = caller.accountId;
  const jobId = idOf(item.job)!;
  const errors: ApiErrorBody[] = [];
  const visit = idOf(item.visit);
  if (visit !== undefined && (await visitJob(db, account, visit)) !== jobId)
    errors.push(validationError('invalid', 'visit', 'must be a visit of the job'));
  const templateId = idOf(item.template)!;
  const supersedes = idOf(item.supersedes);
  if (supersedes !== undefined) {
    const earlier = await submissionOf(db, account, supersedes);
    if (earlier && (earlier.template_id !== templateId || earlier.job_id !== jobId))
      errors.push(validationError('invalid', 'supersedes', 'must be a submission of the same template and job'));
  }
  const template = await templateNow(db, account, templateId);
  // A template the account does not have is reported by the reference check (1045).
  if (!template) return errors;
  const ids = namedFileIds(template.fields, item.answers);
  const read = kinds.get(item) ?? new Map();
  const facts = new Map<number, FileFacts>(
    (await filesOf(db, account, ids)).map((r) => [
      r.id,
      { jobId: r.job_id, mimeType: r.mime_type, sha256: r.sha256, kind: read.get(r.sha256) },
    ]),
  );
  const checked = checkAnswers(template.fields, item.answers, jobId, facts);
  errors.push(...checked.errors);
  if (errors.length) return errors;

  const submitted = new Date(caller.now).toISOString();
  const submittedBy = caller.userId;
  const hashed = {
    template: templateId,
    templateVersion: template.version,
    job: jobId,
    visit: visit ?? null,
    answers: hashedAnswers(template.fields, checked.answers, (id) => facts.get(id)!.sha256),
    submittedBy,
    submitted,
  };
  Object.assign(row, {
    answers: JSON.stringify(checked.answers),
    template_version: template.version,
    submitted_by: submittedBy,
    submitted,
    sha256: createHash('sha256').update(canonicalJson(hashed), 'utf8').digest('hex'),
  });
  named.set(item, checked.fileIds);
  return [];
}

/** Forms filled in on a job (PRODUCT §17): immutable once submitted; a correction supersedes. */
export const formSubmissions = defineCollection({
  name: 'formSubmissions',
  table: 'form_submissions',
  description:
    "A form filled in on a job: answers checked against the template's current fields, with the sha256 anyone can recompute. " +
    'Never changed (PATCH and DELETE 405): a correction is a new submission that `supersedes` the earlier one. ' +
    'Administrators and Employees read and submit on every job; Contractors on the jobs they can see.',
  fields: formSubmissionFields,
  appendOnly: true,
  counted: true,
  textField: 'submitted',
  example: (ref) => ({ template: ref('formTemplates'), job: ref('jobs'), answers: { applianceSafe: true } }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    own: byTheirJob,
    ownReads: ['visits'],
    // Which job is theirs is checked in the transaction (onSeenJob), before check.
    ownsNew: () => true,
    onSeenJob: 'job',
  },
  rules: {
    prepare,
    check,
    async after({ caller, db, item, id }) {
      await linkFiles(db, caller.accountId, id, named.get(item) ?? []);
    },
  },
});
