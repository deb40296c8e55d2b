import { Readable } from 'node:stream';
import { ApiError } from '../../errors.js';
import type { ActionDoc, ActionRequest } from '../machinery/collection.js';
import { SourceError, StoreUnavailableError, TooLargeError, type StagedBlob } from '../../storage/blobs.js';

/** What an upload request carried: the staged bytes and the item members it named. */
export interface Received {
  staged: StagedBlob;
  mimeType: string;
  name?: string;
  /** As sent (`12`, empty or `null`); turned into `{id}` for the write path to validate. */
  job?: string;
}

const TOKEN = '[a-z0-9!#$&^_.+-]+';
const ESSENCE = new RegExp(`^${TOKEN}/${TOKEN}$`);
const CHARSET = /;\s*charset="?([a-z0-9_.:-]{1,40})"?/i;

/** A clean `type/subtype` (with its charset, if any); anything odd is served as octet-stream. */
export function mediaType(raw: string | undefined): string {
  const essence = raw?.split(';')[0].trim().toLowerCase() ?? '';
  if (!ESSENCE.test(essence) || essence.length > 200) return 'application/octet-stream';
  const charset = raw ? CHARSET.exec(raw)?.[1] : undefined;
  return charset ? `${essence}; charset=${charset.toLowerCase()}` : essence;
}

function queryMembers(request: ActionRequest): { name?: string; job?: string } {
  const query = request.query;
  for (const [k, v] of Object.entries(query)) {
    if (k !== 'name' && k !== 'job')
      throw new ApiError('badModifier', `unknown query parameter '${k.slice(0, 64)}' (the upload takes name and job)`);
    if (typeof v !== 'string') throw new ApiError('badModifier', `${k} is given more than once`);
  }
  return { name: query.name as string | undefined, job: query.job as string | undefined };
}

/** Multipart limits are checked by busboy and our own counter; these errors all mean "too big". */
const TOO_LARGE = new Set(['FST_REQ_FILE_TOO_LARGE']);

async function fromMultipart(request: ActionRequest, max: number, members: { name?: string; job?: string }) {
  const store = request.services.blobs;
  let staged: StagedBlob | undefined;
  let mimeType = 'application/octet-stream';
  let filename: string | undefined;
  try {
    // One file part; a few small fields. busboy truncates at max+1 so our counter sees the overflow.
    const parts = request.parts!({ fileSize: max + 1, files: 1, fields: 10, parts: 12, fieldSize: 4096 });
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.fieldname === 'name' || part.fieldname === 'job') members[part.fieldname] = String(part.value);
        else
          throw new ApiError(
            'generic',
            `unexpected multipart field '${part.fieldname.slice(0, 64)}' (expected file, name, job)`,
          );
      } else if (part.fieldname !== 'file') {
        part.file.resume();
        throw new ApiError('generic', "the file part must be named 'file'");
      } else {
        try {
          staged = await store.stage(part.file, max);
        } catch (err) {
          part.file.resume(); // let busboy skip the rest of the part (bounded by its own limit)
          throw err;
        }
        mimeType = mediaType(part.mimetype);
        filename = part.filename || undefined;
      }
    }
  } catch (err) {
    await staged?.discard();
    const code = (err as { code?: string }).code;
    if (err instanceof TooLargeError || (code && TOO_LARGE.has(code)))
      throw err instanceof TooLargeError ? err : new TooLargeError(max);
    if (code === 'FST_FILES_LIMIT') throw new ApiError('generic', 'one file per upload');
    if (err instanceof ApiError || err instanceof StoreUnavailableError) throw err;
    throw new ApiError('generic', 'malformed multipart body (it ended inside a part, or is not multipart/form-data)');
  }
  if (!staged) throw new ApiError('generic', "a multipart upload needs a 'file' part");
  return { staged, mimeType, name: members.name ?? filename, job: members.job };
}

async function fromRawBody(request: ActionRequest, max: number, members: { name?: string; job?: string }) {
  const body = request.body;
  // application/json bodies were already parsed by the API's JSON parser (1 MiB): not a file stream.
  if (body !== undefined && !(body instanceof Readable)) {
    throw new ApiError('unsupportedMediaType', 'upload JSON files as multipart/form-data or application/octet-stream');
  }
  if (request.declaredLength !== undefined && request.declaredLength > max) throw new TooLargeError(max);
  const staged = await request.services.blobs.stage((body as Readable | undefined) ?? Readable.from([]), max);
  return { staged, mimeType: mediaType(request.contentType), ...members };
}

/** What a client is told when the file store cannot be reached: never the store's own words (they name buckets, hosts). */
export function storeUnavailable(cause: StoreUnavailableError, headers: Record<string, string> = {}): ApiError {
  const err = new ApiError('unavailable', 'the file store cannot be reached; try again later', {
    'retry-after': '5',
    ...headers,
  });
  // Logged with the 503 (src/app.ts), never answered.
  return Object.assign(err, { cause });
}

/**
 * Streams the upload into staging storage (never whole in memory), hashing and counting as it
 * goes. Over the limit: 413 and nothing kept; the connection is closed rather than drained. A
 * body that fails or stops short (a client gone, a multipart part never closed) keeps nothing.
 */
export async function receiveUpload(request: ActionRequest): Promise<Received> {
  const max = request.services.config.filesMaxBytes;
  const members = queryMembers(request);
  try {
    return request.parts ? await fromMultipart(request, max, members) : await fromRawBody(request, max, members);
  } catch (err) {
    if (err instanceof TooLargeError)
      throw new ApiError('fileTooLarge', `at most ${max} bytes`, { connection: 'close' });
    // The rest of the body is not read: the connection closes after the answer.
    if (err instanceof StoreUnavailableError) throw storeUnavailable(err, { connection: 'close' });
    if (err instanceof SourceError) throw new ApiError('generic', 'the upload ended before its end');
    throw err;
  }
}

/** The upload's part of the OpenAPI document (the success envelope and errors are added generically). */
export const uploadDoc: ActionDoc = {
  on: 'collection',
  summary: 'Upload a file',
  description:
    'Streams the file to storage (never whole in memory), hashing it with SHA-256, and creates the `files` item. ' +
    'Send `multipart/form-data` (part `file`; optional fields `name` and `job`, a job id) or the raw bytes with any ' +
    'non-JSON `Content-Type` (kept as `mimeType`) and `?name=` (and optional `?job=`). Over the limit (25 MiB by ' +
    'default, `FILES_MAX_BYTES`): 413, code 1062, and nothing is kept. Answers like a create.',
  parameters: [
    {
      name: 'name',
      in: 'query',
      required: false,
      schema: { type: 'string', maxLength: 255 },
      description: 'File name (required for a raw body)',
    },
    {
      name: 'job',
      in: 'query',
      required: false,
      schema: { type: 'string', pattern: '^(\\d+|null)?$' },
      description: 'Id of a job to attach the file to',
    },
  ],
  requestBody: {
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['file'],
          properties: {
            file: {
              type: 'string',
              contentMediaType: 'application/octet-stream',
              description: 'The bytes; its filename is the default name',
            },
            name: { type: 'string', maxLength: 255 },
            job: { type: 'string', description: 'Job id' },
          },
        },
      },
      'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
      '*/*': { schema: { type: 'string', description: 'Any non-JSON media type; stored as the mimeType' } },
    },
  },
};
