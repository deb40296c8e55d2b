import { ApiError, validationError } from '../../errors.js';
import {
  defineCollection,
  type ActionAnswer,
  type ActionRequest,
  type Collection,
  type Item,
  type Row,
} from '../machinery/collection.js';
import { StoreUnavailableError } from '../../storage/blobs.js';
import type { WriteSuccess } from '../machinery/write/index.js';
import { fileFields } from './schema.js';
import { downloadPaths } from './download-doc.js';
import { receiveUpload, storeUnavailable, uploadDoc, type Received } from './upload.js';
import { collectBytes, lockDigest } from './bytes.js';
import { byTheirJob } from '../policy.js';
import { submissionsNaming } from './repository.js';

function toJob(raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  if (raw === '' || raw === 'null') return null;
  // Anything but digits stays a string, so validation reports it as a malformed association.
  return /^\d{1,15}$/.test(raw) ? { id: Number(raw) } : raw;
}

/** `POST /files/upload`: stream, stage, then create the item through the shared write path. */
async function upload(request: ActionRequest): Promise<ActionAnswer> {
  if (request.item !== undefined) throw new ApiError('unknownAction', "'upload' applies to /files, not to one file");
  const received = await receiveUpload(request);
  const newItem: Item = {};
  if (received.name !== undefined) newItem.name = received.name;
  const job = toJob(received.job);
  if (job !== undefined) newItem.job = job;
  const { staged } = received;
  let created = false;
  try {
    // A repeat of an upload (same Idempotency-Key, same bytes and members) gets the first answer again.
    const replay = await request.retry?.claim(
      `${received.staged.sha256}\n${JSON.stringify([received.mimeType, received.name ?? null, received.job ?? null])}`,
    );
    if (replay) return replay;
    const answer = (out: WriteSuccess): ActionAnswer => ({
      status: 200,
      body: { result: 'success', files: out.items, metadata: out.metadata },
    });
    const { retry } = request;
    // The staged bytes travel beside the item, never through it, so a client can never set the
    // digest, size or type, and a plain `POST /files` (no upload behind it) is refused.
    const out = await request.services.writer.write({
      collection: files,
      caller: request.caller,
      op: 'create',
      input: [newItem],
      attached: [received],
      seal: retry && ((tx, result) => retry.keep(tx, answer(result))),
    });
    if (out.result === 'failure') return { status: 422, body: out };
    created = true;
    return answer(out);
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw storeUnavailable(err);
    throw err;
  } finally {
    // Before answering: once the client has its answer, nothing of a refused upload is left,
    // including bytes published by a transaction that then rolled back (unless a row uses them).
    await staged.discard().catch(() => {});
    if (staged.committed && !created)
      await collectBytes(request.services.database, request.services.blobs, [staged.sha256], request.caller.now);
  }
}

export const files: Collection = defineCollection({
  name: 'files',
  table: 'files',
  description:
    'Uploaded files (photos, reports, signed forms), optionally attached to a job. Created only by POST /files/upload; ' +
    'PATCH renames or re-attaches; DELETE removes the item and, when nothing else uses them, the bytes. ' +
    'Administrators and Employees read and write files; Contractors read and upload the files of the jobs they can see ' +
    '(an upload must be attached to one of those jobs).',
  fields: fileFields,
  example: (ref) => ({ name: 'plan.pdf', job: ref('jobs') }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    actions: { upload: {} },
    // PRODUCT §2: a Contractor's files are those of the jobs they can see (crews photograph the work).
    own: byTheirJob,
    ownReads: ['visits'],
    // Which job is theirs is checked in the transaction (onSeenJob).
    ownsNew: () => true,
    onSeenJob: 'job',
  },
  actions: { upload },
  actionDocs: { upload: uploadDoc },
  createVia: 'upload',
  extraPaths: downloadPaths,
  counted: true,
  rules: {
    /**
     * A Contractor's file is attached to a job they can see: an upload without a job, or with
     * another job (which looks missing to them), is refused, and so is moving a file off their jobs.
     */
    async check({ caller, db, op, item, existing }) {
      // A file a form submission names is part of its record (PRODUCT §17): never changed nor deleted.
      if (op !== 'create' && existing) {
        const naming = await submissionsNaming(db, caller.accountId, existing.id);
        if (naming.length) {
          const shown = naming.slice(0, 5).join(', ') + (naming.length > 5 ? ', …' : '');
          const why = `form submissions name it (${shown})`;
          return [op === 'delete' ? validationError('inUse', 'id', why) : validationError('conflict', 'id', why)];
        }
      }
      if (caller.role !== 'contractor' || op === 'delete') return [];
      if (item.job === undefined) return op === 'create' ? [validationError('required', 'job')] : [];
      if (item.job === null) return [validationError('required', 'job')];
      return [];
    },
    // The dispatcher already refuses POST /files (createVia); this guards any other writer.
    validate({ op, attached }) {
      if (op === 'create' && !attached) {
        throw new ApiError('methodNotAllowed', 'files are created with POST /files/upload', {
          allow: 'GET, PATCH, DELETE',
        });
      }
      return [];
    },
    async prepare({ caller, op, row, attached }) {
      const up = op === 'create' ? (attached as Received | undefined) : undefined;
      if (!up) return;
      Object.assign(row, {
        mime_type: up.mimeType,
        size: up.staged.size,
        sha256: up.staged.sha256,
        user_id: caller.userId || null,
      });
    },
    // Publishing the bytes inside the transaction, under the digest lock, means a concurrent delete
    // of the last other copy either runs before (and we put the bytes back) or sees our row.
    async after({ db, op, attached }) {
      const up = op === 'create' ? (attached as Received | undefined) : undefined;
      if (!up) return;
      await lockDigest(db, up.staged.sha256);
      await up.staged.commit();
    },
    // A store that is down keeps the bytes for later (file_deletions): the rows are gone already.
    async committed({ services, caller, op, existing }) {
      if (op !== 'delete') return;
      await collectBytes(
        services.database,
        services.blobs,
        existing.flatMap((r: Row | undefined) => (r ? [String(r.sha256)] : [])),
        caller.now,
      );
    },
  },
});
