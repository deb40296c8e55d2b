import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Config } from '../config.js';
import { CLOSE_WAIT_MS, DIGEST, Staging, StoreUnavailableError, type BlobStore, type StagedBlob } from './blobs.js';
import { meter } from './meter.js';

/**
 * Bytes in an S3-compatible object store. Objects: `files/<sha256>` holds the bytes of a digest;
 * `tmp/<random>` is an upload being staged. stage = a multipart upload (a single PutObject below
 * one part) to a `tmp/` key while hashing and counting; commit (inside the write transaction, under
 * the digest's lock) = CopyObject to `files/<sha256>` unless that object is already there; discard
 * = delete the `tmp/` key. A process holds one part (PART_BYTES) of an upload in memory at a time
 * and writes nothing to local disk.
 */
const PART_BYTES = 5 * 1024 * 1024;
const DIGESTS = 'files/';
const STAGING = 'tmp/';

// The SDK is pinned (package.json) at a version that supports Node 20; its notice that later
// versions will need Node 22 is for whoever moves the pin (docs/files.md), not for operators.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** An S3 error in words for the operator's log, never for a client. */
function inWords(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (e.code === 'ECONNREFUSED') return 'nothing accepts connections at the endpoint';
  if (e.name === 'TimeoutError' || e.code === 'ETIMEDOUT') return 'the store did not answer in time (S3_TIMEOUT)';
  if (status === 404 || e.name === 'NoSuchBucket') return 'the bucket does not exist';
  if (status === 403 || status === 401)
    return 'the store refused the credentials (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY)';
  return `${e.name ?? 'error'}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? e.code ?? String(err)}`.slice(
    0,
    300,
  );
}

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

export class S3Store implements BlobStore {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;
  /** Staging this process could not remove (the store was down): retried by every sweep. */
  private readonly leftovers = new Map<string, string | undefined>();
  private readonly staging = new Staging();

  constructor(private readonly config: S3Config) {
    this.bucket = config.bucket;
    this.client = new S3Client({
      endpoint: config.endpoint,
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials,
      // No request checksums: a streamed body would be sent as `aws-chunked`, which many
      // S3-compatible stores keep as part of the bytes or refuse (PRODUCT §14).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      requestHandler: {
        connectionTimeout: Math.min(config.timeoutMs, 3000),
        requestTimeout: config.timeoutMs,
        throwOnRequestTimeout: true,
        socketTimeout: config.timeoutMs,
      },
    });
  }

  private unavailable(what: string, err: unknown): StoreUnavailableError {
    return new StoreUnavailableError(`the file store (bucket ${this.bucket}): ${what}: ${inWords(err)}`, {
      cause: err,
    });
  }

  private async send<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw this.unavailable(what, err);
    }
  }

  private keyOf(sha256: string): string {
    if (!DIGEST.test(sha256)) throw new Error('not a sha256 digest');
    return DIGESTS + sha256;
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    const end = this.staging.begin();
    const metered = meter(source, maxBytes);
    const tmpKey = STAGING + crypto.randomBytes(16).toString('hex');
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: tmpKey, Body: metered.stream, ContentType: 'application/octet-stream' },
      partSize: PART_BYTES,
      queueSize: 1,
      // We abort ourselves, so that an abort the store cannot take now is retried later.
      leavePartsOnError: true,
    });
    try {
      await upload.done();
    } catch (err) {
      metered.detach();
      metered.stream.destroy();
      await this.abandon(tmpKey, upload.uploadId);
      end();
      throw metered.failure() ?? this.unavailable('upload', err);
    }
    const sha256 = metered.digest();
    const size = metered.size();
    const target = this.keyOf(sha256);
    let staged = true;
    let committed = false;
    return {
      sha256,
      size,
      get committed() {
        return committed;
      },
      commit: async () => {
        // The same digest is the same bytes: an object already there needs no copy.
        let there = false;
        try {
          there =
            (await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: target }))).ContentLength ===
            size;
        } catch (err) {
          if (!notFound(err)) throw this.unavailable('head', err);
        }
        if (!there)
          await this.send('copy', () =>
            this.client.send(
              new CopyObjectCommand({ Bucket: this.bucket, Key: target, CopySource: `${this.bucket}/${tmpKey}` }),
            ),
          );
        committed = true;
      },
      discard: async () => {
        if (!staged) return;
        staged = false;
        await this.abandon(tmpKey, undefined);
        end();
      },
    };
  }

  /** Removes a staging object or aborts its multipart upload; when the store cannot, later. */
  private async abandon(key: string, uploadId: string | undefined): Promise<void> {
    try {
      if (uploadId)
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }));
      else await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
      this.leftovers.delete(key);
    } catch (err) {
      if (uploadId && notFound(err)) return; // NoSuchUpload: already gone
      this.leftovers.set(key, uploadId);
    }
  }

  async open(sha256: string): Promise<{ stream: Readable; size: number } | undefined> {
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(sha256) }));
      return { stream: got.Body as Readable, size: Number(got.ContentLength) };
    } catch (err) {
      if (notFound(err)) return undefined;
      throw this.unavailable('read', err);
    }
  }

  async delete(sha256: string): Promise<void> {
    const Key = this.keyOf(sha256);
    await this.send('delete', () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key })));
  }

  async *digests(): AsyncIterable<{ sha256: string; modified: number }> {
    for await (const o of this.objects(DIGESTS)) {
      const sha256 = o.key.slice(DIGESTS.length);
      if (DIGEST.test(sha256)) yield { sha256, modified: o.modified };
    }
  }

  private async *objects(prefix: string): AsyncIterable<{ key: string; modified: number }> {
    let token: string | undefined;
    do {
      const page = await this.send('list', () =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token })),
      );
      for (const o of page.Contents ?? [])
        if (o.Key) yield { key: o.Key, modified: o.LastModified?.getTime() ?? Date.now() };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async sweep(before?: number): Promise<number> {
    let removed = 0;
    for (const [key, uploadId] of [...this.leftovers]) {
      await this.abandon(key, uploadId);
      if (!this.leftovers.has(key)) removed++;
    }
    if (before === undefined) return removed;
    for await (const o of this.objects(STAGING)) {
      if (o.modified >= before) continue;
      await this.send('delete', () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: o.key })));
      removed++;
    }
    return removed + (await this.abortOldUploads(before));
  }

  /** Multipart uploads under `tmp/` begun before `before` and never completed or aborted. */
  private async abortOldUploads(before: number): Promise<number> {
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await this.client
        .send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: STAGING,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        )
        .catch((err) => {
          // A store without the listing (s3rver): its lifecycle rules are the only sweep left.
          if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 501) return undefined;
          throw this.unavailable('list uploads', err);
        });
      if (!page) return removed;
      for (const u of page.Uploads ?? []) {
        if (!u.Key || !u.UploadId || (u.Initiated?.getTime() ?? 0) >= before) continue;
        await this.abandon(u.Key, u.UploadId);
        removed++;
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
    return removed;
  }

  /** The bucket exists, the credentials are accepted, and an object can be written and removed. */
  async check(): Promise<void> {
    const where = `bucket ${this.bucket}${this.config.endpoint ? ` at ${this.config.endpoint}` : ` in ${this.config.region}`}`;
    const fail = (what: string) => (err: unknown) => {
      throw new StoreUnavailableError(`the file store (${where}): ${what}: ${inWords(err)}`, { cause: err });
    };
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket })).catch(fail('cannot reach the bucket'));
    const Key = `${STAGING}check-${crypto.randomBytes(8).toString('hex')}`;
    await this.client
      .send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: Buffer.from('ok') }))
      .catch(fail('cannot write an object'));
    await this.client
      .send(new DeleteObjectCommand({ Bucket: this.bucket, Key }))
      .catch(fail('cannot delete an object'));
  }

  async close(): Promise<void> {
    await this.staging.settled(CLOSE_WAIT_MS);
    this.client.destroy();
  }
}
